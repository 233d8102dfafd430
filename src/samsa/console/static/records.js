// Samsa console, record rows (the browser's and the search's): one line each, a
// preview of key, value and headers; a click opens the row to the whole shown value
// (JSON pretty-printed) with its size. And the export of what the page shows.
"use strict";

function oneLine(v) {
  // The value on one line: JSON compacted, line breaks as "⏎".
  if (v.encoding === "json") {
    try { return JSON.stringify(JSON.parse(v.text)); } catch (_) { /* shown as is */ }
  }
  return v.text.replace(/\r?\n/g, " ⏎ ");
}

function shownValue(v) {
  if (v === null) return el("span", "null", "null");
  const box = el("div", null, "value-box");
  const note = `${count(v.size)} bytes · ${v.encoding === "hex" ? "binary, shown as hex" : v.encoding}`
    + (v.truncated ? " · truncated" : "");
  const preview = el("span", oneLine(v), `preview ${v.encoding}`);
  preview.title = note;
  box.append(preview);
  if (v.truncated) box.append(el("span", "…", "cut-mark"));
  box.append(el("pre", v.text, `value ${v.encoding}`));
  box.append(el("span", note, v.truncated ? "size truncated" : "size"));
  return box;
}

function headersCell(headers) {
  const text = headers.map((h) => `${h.key}=${h.value ? h.value.text : "null"}`);
  const box = el("div", null, "value-box");
  box.append(el("span", text.join(", "), "preview"));
  const full = el("div", null, "value headers-full");
  text.forEach((line) => full.append(el("div", line)));
  box.append(full);
  return box;
}

function recordRows(records) {
  return records.map((r) => {
    const tr = row([r.partition, r.offset, new Date(r.timestamp).toISOString(),
      withSchema(shownValue(r.key), r.key_schema), withSchema(shownValue(r.value), r.value_schema),
      headersCell(r.headers)], [0, 1]);
    tr.className = "record";
    tr.dataset.offset = r.offset;
    tr.dataset.partition = r.partition;
    tr.title = "click to open or close";
    tr.onclick = (event) => {
      if (window.getSelection().toString()) return; // selecting text, not opening
      if (event.target.closest("pre")) return;
      tr.classList.toggle("open");
    };
    return tr;
  });
}

function showRecords(topic, query, records) {
  state.shown = { topic, query, records };
  fill("#messages", recordRows(records));
  const exportButton = $("#export");
  if (exportButton) exportButton.disabled = !records.length;
}

function exportShown() {
  // The records the page shows, as JSON, downloaded (values as the page shows
  // them: text, JSON or hex, cut where the page cuts them).
  const shown = state.shown;
  if (!shown) return;
  const body = JSON.stringify({
    topic: shown.topic, query: shown.query, exported_at: new Date().toISOString(),
    records: shown.records,
  }, null, 2);
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([body], { type: "application/json" }));
  a.download = `${shown.topic}-messages.json`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
