// Samsa console, the message browser: a page of records from the newest, the oldest,
// an offset or a time; with a search text, the whole topic is searched instead
// (search.js). Read once per query, not every second.
"use strict";

const BROWSE_FIELDS = ["partition", "from", "offset", "limit", "q", "scan_limit"];

function setupMessages(route) {
  const p = route.params;
  const form = $("#browse");
  for (const name of BROWSE_FIELDS) {
    if (p.has(name)) form.elements[name].value = p.get(name);
  }
  if (p.has("timestamp")) {
    const d = new Date(Number(p.get("timestamp")));
    form.elements.timestamp.value = new Date(d - d.getTimezoneOffset() * 60000)
      .toISOString().slice(0, 19);
  }
  const toggle = () => {
    form.dataset.from = form.elements.from.value;
    form.dataset.search = form.elements.q.value.trim() ? "true" : "false";
  };
  form.elements.from.onchange = toggle;
  form.elements.q.oninput = toggle;
  toggle();
  form.onsubmit = (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    const searching = form.elements.q.value.trim() !== "";
    for (const name of BROWSE_FIELDS) {
      const value = form.elements[name].value.trim();
      if (value === "" || (name === "offset" && form.elements.from.value !== "offset")) continue;
      if (name === "scan_limit" && !searching) continue;
      query.set(name, value);
    }
    if (form.elements.from.value === "timestamp" && form.elements.timestamp.value) {
      query.set("timestamp", String(new Date(form.elements.timestamp.value).getTime()));
    }
    const hash = `${topicHref(route.topic)}/messages?${query}`;
    if (location.hash === hash) show(); // the same query again: search again
    else location.hash = hash;
  };
  $("#messages-topic").textContent = route.topic;
  $("#messages-topic").href = topicHref(route.topic);
  $("#export").onclick = exportShown;
  $("#export").disabled = true;
}

function problemsOf(m) {
  const problems = m.partitions.filter((p) => p.error).map((p) => `partition ${p.partition}: ${p.error}`);
  m.elsewhere.forEach((e) => problems.push(e.leader < 0 ? `${count(e.partitions)} partitions offline`
    : `${count(e.partitions)} partitions led by broker ${e.leader}: browse them on its console`));
  return problems;
}

async function refreshMessages(route) {
  if (route.params.get("q")) {
    startSearch(route); // runs on by itself, a slice at a time
    return;
  }
  const query = new URLSearchParams(route.params);
  const m = await get(`${topicApi(route.topic)}/messages?${query}`);
  $("#browse-status").replaceChildren(
    el("span", `${m.records.length} records`),
    el("span", `from ${m.from}`),
    el("span", `${bytes(m.bytes_read)} read (at most ${bytes(m.max_bytes)})`, "muted"),
    ...problemsOf(m).map((text) => el("span", text, "bad")));
  showRecords(route.topic, Object.fromEntries(query), m.records);
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
