// Samsa console, searching a whole topic: the server scans a slice of the scan limit
// per call (/api/topics/NAME/search) and says where each partition got to; this
// page calls again from there, showing progress, until the records wanted are
// found, the scan limit is reached, the topic ends or the user stops it. It then
// offers to continue from the position reached.
"use strict";

const SEARCH_SLICE = 20000; // records scanned per call: progress about every tenth of a second

function progressText(scanned, answer) {
  const open = answer.positions.filter((p) => !p.done);
  const left = open.reduce((n, p) => n + p.remaining, 0);
  const where = open.slice(0, 4).map((p) => `partition ${p.partition} at offset ${count(p.position)}`);
  if (open.length > 4) where.push(`${count(open.length - 4)} more partitions`);
  return { left, where: where.join(", ") };
}

function showSearchStatus(route, run, answer, final) {
  const box = $("#search-progress");
  box.hidden = false;
  const { left, where } = progressText(run.scanned, answer);
  const bar = el("progress");
  bar.max = run.scanned + left || 1;
  bar.value = run.scanned;
  const parts = [bar, el("span", `${count(run.records.length)} found in ${count(run.scanned)} `
    + `records scanned (${bytes(run.bytes)} read)`, "found")];
  if (!final) {
    parts.push(el("span", `searching… ${where}`, "muted"));
    const stop = el("button", "Stop");
    stop.type = "button";
    stop.className = "secondary";
    stop.onclick = () => { run.stopped = true; };
    parts.push(stop);
  } else {
    parts.push(el("span", searchEnd(run, answer), answer.done ? "good" : ""));
    if (answer.continue) {
      const query = new URLSearchParams(route.params);
      query.set("positions", answer.continue);
      parts.push(el("span", `reached ${where}`, "muted"));
      parts.push(link("continue from here ›", `${topicHref(route.topic)}/messages?${query}`));
    }
  }
  box.replaceChildren(...parts);
  box.dataset.state = final ? "done" : "running";
  document.body.dataset.search = final ? "done" : "running";
}

function searchEnd(run, answer) {
  if (answer.done) return "searched to the end";
  if (run.stopped) return "stopped";
  if (run.records.length >= run.limit) return `stopped at ${count(run.limit)} matches`;
  return `stopped at the scan limit (${count(run.scanLimit)} records)`;
}

async function startSearch(route) {
  const p = route.params;
  const run = {
    limit: Number(p.get("limit") || 50), scanLimit: Number(p.get("scan_limit") || 100000),
    scanned: 0, bytes: 0, records: [], stopped: false,
  };
  state.search = run;
  const base = new URLSearchParams();
  for (const name of ["q", "partition", "from", "offset", "timestamp"]) {
    if (p.get(name)) base.set(name, p.get(name));
  }
  let positions = p.get("positions");
  const backward = (p.get("from") || "newest") === "newest";
  $("#browse-status").replaceChildren(el("span", `searching ${route.topic} for “${p.get("q")}”`));
  document.body.dataset.search = "running";
  showRecords(route.topic, Object.fromEntries(p), []);
  let answer = null;
  for (;;) {
    const query = new URLSearchParams(base);
    query.set("limit", String(Math.max(1, run.limit - run.records.length)));
    query.set("scan_limit", String(Math.max(1, Math.min(SEARCH_SLICE, run.scanLimit - run.scanned))));
    if (positions) query.set("positions", positions);
    try {
      answer = await get(`${topicApi(route.topic)}/search?${query}`);
    } catch (err) {
      if (state.search === run) showError(err);
      document.body.dataset.search = "error";
      return;
    }
    if (state.search !== run || state.route !== route) return; // the user went elsewhere
    run.scanned += answer.scanned;
    run.bytes += answer.bytes_read;
    run.records.push(...answer.records);
    positions = answer.continue;
    const order = (a, b) => (a.timestamp - b.timestamp) || (a.partition - b.partition)
      || (a.offset - b.offset);
    run.records.sort(backward ? (a, b) => order(b, a) : order);
    showRecords(route.topic, Object.fromEntries(p), run.records);
    const finished = answer.done || run.stopped || run.records.length >= run.limit
      || run.scanned >= run.scanLimit;
    showSearchStatus(route, run, answer, finished);
    if (finished) break;
  }
  if (!run.records.length) fill("#messages", [row(["no record matches in the records scanned"])]);
  const problems = problemsOf({ partitions: answer.positions, elsewhere: answer.elsewhere });
  $("#browse-status").replaceChildren(
    el("span", `${count(run.records.length)} ${run.records.length === 1 ? "record matches"
      : "records match"} “${answer.q}”`),
    el("span", `from ${answer.from} (${answer.direction})`),
    ...problems.map((text) => el("span", text, "bad")));
}
