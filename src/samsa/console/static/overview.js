// Samsa console, the overview page: rates, topics, consumer groups, share groups.
"use strict";

// ---------------------------------------------------------------- overview

async function refreshOverview() {
  const filter = encodeURIComponent(state.topicFilter);
  const [topics, groups, rates, shares] = await Promise.all([
    get(`/api/topics?offset=${state.topicsAt}&limit=${PAGE}&q=${filter}`),
    get("/api/groups"), get("/api/rates"), get("/api/share-groups"),
  ]);
  $("#topic-count").textContent = `(${count(topics.total)})`;
  fill("#topics", topics.topics.map((t) => {
    const health = t.offline ? `${t.offline} offline` : t.under_replicated
      ? `${t.under_replicated} under-replicated` : "ok";
    const tr = row([link(t.name, topicHref(t.name)), count(t.partitions), count(t.records),
      bytes(t.size_bytes), health], [1, 2, 3]);
    tr.dataset.topic = t.name;
    if (t.offline || t.under_replicated) tr.cells[4].classList.add("bad");
    return tr;
  }));
  pager("#topic-pager", state.topicsAt, topics.total, (at) => { state.topicsAt = at; refresh(); });
  $("#group-count").textContent = `(${count(groups.total)})`;
  fill("#groups", groups.groups.map((g) => {
    const lag = g.lag_uncounted ? `${count(g.lag)} (${count(g.lag_uncounted)} uncounted)` : count(g.lag);
    const tr = row([link(g.group, groupHref(g.group)), g.state, g.members, lag], [2, 3]);
    tr.dataset.group = g.group;
    return tr;
  }));
  $("#share-group-count").textContent = `(${count(shares.total)})`;
  fill("#share-groups", shares.groups.map((g) => {
    const inFlight = g.partitions.reduce((n, p) =>
      n + Object.values(p.in_flight).reduce((a, b) => a + b, 0), 0);
    const archived = g.partitions.reduce((n, p) => n + p.archived_total, 0);
    const tr = row([g.group, g.state || "-", g.members.length, count(inFlight), count(archived)],
      [2, 3, 4]);
    tr.dataset.shareGroup = g.group;
    return tr;
  }));
  addRatePoint(rates);
}

function addRatePoint(now) {
  if (state.last) {
    const dt = Math.max(now.time - state.last.time, 0.001);
    const point = {
      in: (now.records_in - state.last.records_in) / dt,
      out: (now.records_out - state.last.records_out) / dt,
    };
    state.points.push(point);
    if (state.points.length > HISTORY) state.points.shift();
    $("#rate-in").textContent = Math.round(point.in).toLocaleString("en-US");
    $("#rate-out").textContent = Math.round(point.out).toLocaleString("en-US");
  }
  state.last = now;
  draw($("#chart"), state.points, [["in", "#2563eb"], ["out", "#16a34a"]]);
}
