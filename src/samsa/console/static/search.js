// Samsa console, searching a whole topic: the server scans a slice of the scan limit
// per call (/api/topics/NAME/search) and says where each partition got to; this
// page calls again from there, showing progress, until the records wanted are
// found, the scan limit is reached, the topic ends or the user stops it. It then
// offers to continue from the position reached.
"use strict";

const SEARCH_SLICE = 20000; // records scanned per call: progress about every tenth of a second

function progressText(answer) {
  // The records left (at most), and where the partitions being searched are.
  const open = answer.positions.filter((p) => !p.done);
  const where = open.slice(0, 4).map((p) => `partition ${p.partition} at offset ${count(p.position)}`);
  const others = answer.partitions_open - Math.min(open.length, 4);
  if (others > 0) where.push(`${count(others)} more partitions`);
  return { left: answer.remaining, where: where.join(", ") };
}

function showSearchStatus(route, run, answer, final) {
  const box = $("#search-progress");
  box.hidden = false;
  const { left, where } = progressText(answer);
  const bar = el("progress");
  bar.max = run.scanned + left || 1;
  bar.value = run.scanned;
  const parts = [bar, el("span", `${count(run.records.length)} found in ${count(run.scanned)} `
    + `records scanned (${bytes(run.bytes)} read)`, "found")];
  const button = (text, onclick) => {
    const b = el("button", text, "secondary");
    b.type = "button";
    b.onclick = onclick;
    return b;
  };
  if (!final) {
    parts.push(el("span", `searching… ${where}`, "muted"));
    parts.push(button("Stop", () => { run.stopped = true; }));
  } else {
    parts.push(el("span", searchEnd(run, answer), answer.done ? "good" : ""));
    if (answer.continue) {
      parts.push(el("span", `reached ${where}`, "muted"));
      parts.push(button("Continue searching", () => {
        // As far again, or as many matches again, from where it stopped.
        run.scanLimit = run.scanned + run.step;
        run.limit = run.records.length + run.wanted;
        run.stopped = false;
        searchMore(route, run, answer.continue);
      }));
      const query = new URLSearchParams(route.params);
      query.set("positions", answer.continue);
      parts.push(link("link to this position", `${topicHref(route.topic)}/messages?${query}`));
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

function startSearch(route) {
  const p = route.params;
  const wanted = Number(p.get("limit") || 50), step = Number(p.get("scan_limit") || 100000);
  const run = {
    wanted, step, limit: wanted, scanLimit: step, scanned: 0, bytes: 0, records: [],
    stopped: false, backward: (p.get("from") || "newest") === "newest",
    base: new URLSearchParams(),
  };
  for (const name of ["q", "partition", "from", "offset", "timestamp"]) {
    if (p.get(name)) run.base.set(name, p.get(name));
  }
  state.search = run;
  $("#browse-status").replaceChildren(el("span", `searching ${route.topic} for “${p.get("q")}”`));
  showRecords(route.topic, Object.fromEntries(p), []);
  searchMore(route, run, p.get("positions"));
}

async function searchMore(route, run, positions) {
  // Call after call from ``positions`` (null: from where "from" says), adding
  // what each finds, until the run's limits, the end, or "Stop".
  document.body.dataset.search = "running";
  $("#search-progress").dataset.state = "running";
  const order = (a, b) => (a.timestamp - b.timestamp) || (a.partition - b.partition)
    || (a.offset - b.offset);
  let answer = null;
  for (;;) {
    const query = new URLSearchParams(run.base);
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
    run.records.sort(run.backward ? (a, b) => order(b, a) : order);
    showRecords(route.topic, Object.fromEntries(route.params), run.records);
    const finished = answer.done || run.stopped || run.records.length >= run.limit
      || run.scanned >= run.scanLimit;
    showSearchStatus(route, run, answer, finished);
    if (finished) break;
  }
  if (!run.records.length) fill("#messages", [noteRow("no record matches in the records scanned")]);
  const problems = problemsOf({ partitions: answer.positions, elsewhere: answer.elsewhere });
  $("#browse-status").replaceChildren(
    el("span", `${count(run.records.length)} ${run.records.length === 1 ? "record matches"
      : "records match"} “${answer.q}”`),
    el("span", `from ${answer.from} (${answer.direction})`),
    ...problems.map((text) => el("span", text, "bad")));
}
