// Samsa console, the topic page: partitions, rates, both tiers of a tiered topic,
// configs (and changing them), the groups that read it, and its actions. The
// consumers are read once per visit (and on "refresh"), not every second: they walk
// every group's offsets.
"use strict";

function setupTopic(route) {
  $("#consumers-refresh").onclick = () => loadConsumers(route);
  loadConsumers(route);
}

async function refreshTopic(route) {
  const t = await get(`${topicApi(route.topic)}?offset=${state.partitionsAt}&limit=${PAGE}`);
  state.ops.topic = t.authorized_operations || null;
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
  showTiers(t);
  showTopicConfigs(t.configs);
  if (state.totals) {
    const dt = Math.max(t.totals.time - state.totals.time, 0.001);
    const rate = (key) => Math.round((t.totals[key] - state.totals[key]) / dt);
    $("#topic-rates").replaceChildren(
      el("span", `produce ${count(rate("records_in"))} records/s (${bytes(rate("bytes_in"))}/s)`),
      el("span", `consume ${count(rate("records_out"))} records/s (${bytes(rate("bytes_out"))}/s)`));
  }
  state.totals = t.totals;
  gateActions();
}

// Both tiers of a topic with remote.storage.enable: totals over the partitions this
// broker hosts, then one row per partition of the page (a dash where it has none).
function showTiers(t) {
  const card = $("#tiers-card");
  card.hidden = !t.tiers;
  if (!t.tiers) return;
  const s = t.tiers;
  const lag = (segments, size) => `${count(segments)} segments (${bytes(size)})`;
  $("#tier-totals").replaceChildren(
    el("span", `local ${bytes(s.local_size_bytes)}`),
    el("span", `remote ${bytes(s.remote_size_bytes)} in ${count(s.remote_segments)} segments`),
    el("span", `copy lag ${lag(s.copy_lag_segments, s.copy_lag_bytes)}`),
    el("span", `${count(s.partitions)} of ${count(t.partition_count)} partitions hosted here`,
      "muted"),
    ...(s.not_ready ? [el("span", `${count(s.not_ready)} not replayed yet`, "bad")] : []));
  fill("#tiers", t.partitions.map((p) => {
    const x = p.tiers;
    const tiered = x && x.tiered_end_offset >= 0;
    const tr = x ? row([p.partition, x.local_log_start_offset, bytes(x.local_size_bytes),
      tiered ? x.log_start_offset : null, tiered ? x.tiered_end_offset : null,
      bytes(x.remote_size_bytes), x.remote_segments, lag(x.copy_lag_segments, x.copy_lag_bytes)],
    [0, 1, 3, 4, 6]) : row([p.partition, null, null, null, null, null, null, null], [0]);
    tr.dataset.partition = p.partition;
    return tr;
  }));
}

function showTopicConfigs(configs) {
  const form = $("#alter-config");
  const pick = (c) => {
    if (form.elements.name.disabled) return;
    form.elements.name.value = c.name;
    form.elements.value.value = c.value === null ? "" : c.value;
    form.elements.value.focus();
  };
  const overrides = fillConfigs("#configs", configs, pick);
  $("#override-count").textContent = configs.length ? `(${count(overrides)} overridden)` : "";
  const names = $("#config-names");
  if (names.childElementCount !== configs.length) {
    names.replaceChildren(...configs.filter((c) => !c.read_only).map((c) => new Option(c.name)));
  }
}

async function loadConsumers(route) {
  const box = $("#consumers");
  let answer;
  try {
    answer = await get(`${topicApi(route.topic)}/consumers`);
  } catch (err) {
    if (box) fill("#consumers", [noteRow(err.message)]);
    return;
  }
  if (state.route !== route) return;
  $("#consumer-count").textContent = `(${count(answer.total)})`;
  fill("#consumers", answer.groups.length ? answer.groups.map((g) => {
    const lag = g.no_offset ? `${count(g.lag)} (${count(g.no_offset)} without offset)`
      : count(g.lag);
    const tr = row([link(g.group, groupHref(g.group)), g.state, g.members, g.partitions, lag],
      [2, 3, 4]);
    tr.dataset.group = g.group;
    return tr;
  }) : [noteRow("no group reads this topic (on this broker's coordinator)")]);
}
