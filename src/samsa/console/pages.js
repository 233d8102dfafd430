// Samsa console, part 2 of 3: one renderer per page, and the action forms.
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
    const tr = row([link(g.group, groupHref(g.group)), g.state, g.members, count(g.lag)], [2, 3]);
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
// ---------------------------------------------------------------- topic

async function refreshTopic(route) {
  const name = encodeURIComponent(route.topic);
  const t = await get(`/api/topics/${name}?offset=${state.partitionsAt}&limit=${PAGE}`);
  $("#topic-name").textContent = t.name;
  $("#browse-link").href = `${topicHref(t.name)}/messages`;
  $("#topic-stats").replaceChildren(
    el("span", `${count(t.partition_count)} partitions`),
    el("span", `replication factor ${t.replication_factor}`),
    el("span", `${count(t.counts.under_replicated)} under-replicated`,
      t.counts.under_replicated ? "bad" : ""),
    el("span", `${count(t.counts.under_min_isr)} under min ISR`, t.counts.under_min_isr ? "bad" : ""),
    el("span", `${count(t.counts.offline)} offline`, t.counts.offline ? "bad" : ""),
    el("span", `id ${t.topic_id}`, "muted"));
  fill("#partitions", t.partitions.map((p) => {
    const flags = [p.offline && "offline", p.under_replicated && "under-replicated",
      p.under_min_isr && "under-min-ISR"].filter(Boolean).join(", ");
    const tr = row([p.partition, p.leader < 0 ? "none" : p.leader, p.replicas.join(","),
      p.isr.join(","), p.log_start_offset, p.log_end_offset, bytes(p.size_bytes), flags || "ok",
      p.lso_lag, p.open_transactions], [0, 4, 5, 6, 8, 9]);
    tr.dataset.partition = p.partition;
    if (flags) tr.cells[7].classList.add("bad");
    return tr;
  }));
  pager("#partition-pager", state.partitionsAt, t.partition_count, (at) => {
    state.partitionsAt = at; refresh();
  });
  fill("#configs", t.configs.map((c) => {
    const tr = row([c.name, c.value, c.source]);
    tr.dataset.config = c.name;
    if (c.source !== "DEFAULT_CONFIG") tr.classList.add("override");
    return tr;
  }));
  if (state.totals) {
    const dt = Math.max(t.totals.time - state.totals.time, 0.001);
    const rate = (key) => Math.round((t.totals[key] - state.totals[key]) / dt);
    $("#topic-rates").replaceChildren(
      el("span", `produce ${count(rate("records_in"))} records/s (${bytes(rate("bytes_in"))}/s)`),
      el("span", `consume ${count(rate("records_out"))} records/s (${bytes(rate("bytes_out"))}/s)`));
  }
  state.totals = t.totals;
}

// ---------------------------------------------------------------- messages

function setupMessages(route) {
  const p = route.params;
  const form = $("#browse");
  for (const name of ["partition", "from", "offset", "limit", "q"]) {
    if (p.has(name)) form.elements[name].value = p.get(name);
  }
  if (p.has("timestamp")) {
    const d = new Date(Number(p.get("timestamp")));
    form.elements.timestamp.value = new Date(d - d.getTimezoneOffset() * 60000)
      .toISOString().slice(0, 19);
  }
  const toggle = () => { form.dataset.from = form.elements.from.value; };
  form.elements.from.onchange = toggle;
  toggle();
  form.onsubmit = (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const name of ["partition", "from", "offset", "limit", "q"]) {
      const value = form.elements[name].value.trim();
      if (value !== "" && (name !== "offset" || form.elements.from.value === "offset")) {
        query.set(name, value);
      }
    }
    if (form.elements.from.value === "timestamp" && form.elements.timestamp.value) {
      query.set("timestamp", String(new Date(form.elements.timestamp.value).getTime()));
    }
    location.hash = `${topicHref(route.topic)}/messages?${query}`;
  };
  $("#messages-topic").textContent = route.topic;
  $("#messages-topic").href = topicHref(route.topic);
}

function shownValue(v) {
  if (v === null) return el("span", "null", "null");
  const box = el("div", null, "value-box");
  box.append(el("pre", v.text, `value ${v.encoding}`));
  const note = v.encoding === "hex" ? "binary, shown as hex" : v.encoding;
  box.append(el("span", `${count(v.size)} bytes · ${note}${v.truncated ? " · truncated" : ""}`,
    v.truncated ? "size truncated" : "size"));
  return box;
}

async function refreshMessages(route) {
  const query = new URLSearchParams(route.params);
  const m = await get(`/api/topics/${encodeURIComponent(route.topic)}/messages?${query}`);
  const problems = m.partitions.filter((p) => p.error).map((p) => `partition ${p.partition}: ${p.error}`);
  m.elsewhere.forEach((e) => problems.push(e.leader < 0 ? `${count(e.partitions)} partitions offline`
    : `${count(e.partitions)} partitions led by broker ${e.leader}: browse them on its console`));
  $("#browse-status").replaceChildren(
    el("span", m.q ? `${m.matched} of ${m.scanned} records match “${m.q}”`
      : `${m.records.length} records`),
    el("span", `from ${m.from}`),
    el("span", `${bytes(m.bytes_read)} read (at most ${bytes(m.max_bytes)})`, "muted"),
    ...problems.map((text) => el("span", text, "bad")));
  fill("#messages", m.records.map((r) => {
    const headers = el("div");
    r.headers.forEach((h) => headers.append(el("div", `${h.key}=${h.value ? h.value.text : "null"}`)));
    const tr = row([r.partition, r.offset, new Date(r.timestamp).toISOString(),
      withSchema(shownValue(r.key), r.key_schema), withSchema(shownValue(r.value), r.value_schema),
      headers], [0, 1]);
    tr.dataset.offset = r.offset;
    tr.dataset.partition = r.partition;
    return tr;
  }));
  messagePager(route, m);
}

function messagePager(route, m) {
  // One partition: older and newer pages by offset.
  const box = $("#messages-pager");
  box.replaceChildren();
  if (m.partition === null || !m.records.length) return;
  const offsets = m.records.map((r) => r.offset);
  const low = Math.min(...offsets), high = Math.max(...offsets);
  const page = (offset) => {
    const query = new URLSearchParams(route.params);
    query.set("from", "offset");
    query.set("offset", String(offset));
    return `${topicHref(route.topic)}/messages?${query}`;
  };
  const status = m.partitions.find((p) => p.partition === m.partition) || {};
  if (low > (status.log_start_offset || 0)) {
    box.append(link("‹ older", page(Math.max(status.log_start_offset || 0, low - m.limit))));
  }
  if (status.high_watermark !== undefined && high + 1 < status.high_watermark) {
    box.append(link("newer ›", page(high + 1)));
  }
}

// ---------------------------------------------------------------- group

async function refreshGroup(route) {
  const g = await get(
    `/api/groups/${encodeURIComponent(route.group)}?offset=${state.partitionsAt}&limit=${PAGE}`);
  $("#group-name").textContent = g.group;
  $("#group-state").replaceChildren(el("span", `state ${g.state}`, "state"),
    el("span", `protocol ${g.protocol_type || "-"} / ${g.protocol || "-"}`),
    el("span", `${g.members.length} members`), el("span", `total lag ${count(g.lag)}`, "lag"));
  fill("#group-members", g.members.length ? g.members.map((m) => row([m.member_id, m.client_id,
    m.host, Object.entries(m.assignment).map(([t, ps]) => `${t}: ${ps.join(",")}`).join("; ") || "-"]))
    : [row(["no members (the group is empty)"])]);
  fill("#group-partitions", g.partitions.map((p) => {
    const tr = row([link(p.topic, topicHref(p.topic)), p.partition, p.committed_offset,
      p.log_end_offset, p.lag, p.member_id], [1, 2, 3, 4]);
    tr.dataset.partition = `${p.topic}-${p.partition}`;
    if (p.lag > 0) tr.cells[4].classList.add("lag-high");
    return tr;
  }));
  pager("#group-pager", state.partitionsAt, g.partition_count, (at) => {
    state.partitionsAt = at; refresh();
  });
  const history = (state.lag[g.group] ||= []);
  history.push({ lag: g.lag });
  if (history.length > HISTORY) history.shift();
  draw($("#lag-chart"), history, [["lag", "#b91c1c"]]);
}

// ---------------------------------------------------------------- cluster

function refreshCluster(c) {
  fill("#cluster-brokers", c.brokers.map((b) => {
    const tr = row([b.node_id, `${b.host}:${b.port}`, b.rack, b.state, count(b.partitions_led)],
      [4]);
    tr.dataset.broker = b.node_id;
    tr.cells[3].classList.add(b.state === "active" ? "good" : "bad");
    return tr;
  }));
  const counts = c.partitions;
  fill("#partition-health", [["partitions", counts.partitions], ["under-replicated",
    counts.under_replicated], ["under min ISR", counts.under_min_isr], ["offline", counts.offline],
  ["ISR shrinks / expands (this broker)", `${c.isr.shrinks} / ${c.isr.expands}`]]
    .map(([label, value]) => {
      const tr = row([label, value], [1]);
      tr.dataset.count = label;
      if (label !== "partitions" && typeof value === "number" && value > 0) {
        tr.cells[1].classList.add("bad");
      }
      return tr;
    }));
  const q = c.quorum;
  if (q.available) {
    $("#quorum-summary").replaceChildren(el("span", `leader ${q.leader}`),
      el("span", `epoch ${q.leader_epoch}`), el("span", `high watermark ${count(q.high_watermark)}`));
    fill("#quorum", [...q.voters.map((v) => ["voter", v]), ...q.observers.map((v) => ["observer", v])]
      .map(([role, v]) => row([v.node_id, v.node_id === q.leader ? `${role} (leader)` : role,
        count(v.log_end_offset), count(v.lag)], [2, 3])));
  } else {
    $("#quorum-summary").replaceChildren(el("span", `unavailable: ${q.error}`, "bad"));
    fill("#quorum", []);
  }
  const cl = c.cleaner;
  fill("#cleaner", cl ? [row(["passes", count(cl.passes)], [1]),
    row(["logs cleaned", count(cl.logs_cleaned)], [1]),
    row(["bytes reclaimed", bytes(cl.bytes_reclaimed)], [1]),
    row(["uncleanable", Object.keys(cl.uncleanable).join(", ") || "none"])]
    : [row(["cleaner", "disabled"])]);
  fill("#requests", c.requests.map((r) => row([r.api, r.version, count(r.count), count(r.errors),
    r.mean_ms.toFixed(2)], [1, 2, 3, 4])));
}

// ---------------------------------------------------------------- actions

function wireActions(route) {
  document.querySelectorAll("form[data-action]").forEach((form) => {
    form.onsubmit = async (event) => {
      event.preventDefault();
      const payload = {};
      for (const input of form.elements) {
        if (!input.name || input.value === "") continue;
        payload[input.name] = input.type === "number" ? Number(input.value) : input.value;
      }
      if (route.topic) payload.topic = route.topic;
      if (route.group) payload.group = route.group;
      const out = $("#action-result") || $("#error");
      try {
        const result = await post(form.dataset.action, payload);
        out.className = "result ok";
        out.textContent = "done: " + Object.entries(result).filter(([k]) => k !== "ok")
          .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" ");
        if (form.dataset.action === "create-topic") location.hash = topicHref(payload.name);
        refresh();
      } catch (err) {
        out.className = "result error";
        out.textContent = err.message;
      }
      out.hidden = false;
    };
  });
}
