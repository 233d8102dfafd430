// Samsa console, the first part: state, DOM helpers, the JSON API, charts and pagers.
// Plain DOM and canvas, no libraries, nothing loaded from elsewhere.
"use strict";

const HISTORY = 60; // points on a chart, one per second
const PAGE = 100; // rows of a paginated table
const state = { route: null, last: null, points: [], lag: {}, totals: null, topicsAt: 0,
  partitionsAt: 0, topicFilter: "", actions: false, login: null, user: null,
  ops: {}, // what the user may do, by resource ("topic", "group", "cluster"): authorized operations
  shown: null, // the records the message page shows, for the export
  search: null }; // the running search, if any
window.samsaChart = state; // tests read the points the charts drew

const $ = (selector) => document.querySelector(selector);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function link(text, href) {
  const a = el("a", text);
  a.href = href;
  return a;
}

function row(cells, numeric) {
  const tr = el("tr");
  cells.forEach((cell, i) => {
    const td = el("td");
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell === null || cell === undefined ? "-" : String(cell);
    if (numeric && numeric.includes(i)) td.classList.add("num");
    tr.append(td);
  });
  return tr;
}

function noteRow(text) {
  // A row of one cell across the table: "nothing here", and why.
  const tr = el("tr", null, "note");
  const td = el("td", text, "muted");
  td.colSpan = 20;
  tr.append(td);
  return tr;
}

function fill(selector, rows) {
  const body = $(`${selector} tbody`);
  if (body) body.replaceChildren(...rows);
}

function bytes(n) {
  if (n === null || n === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

const count = (n) => (n === null || n === undefined ? "-" : Number(n).toLocaleString("en-US"));

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function answer(response, path) {
  let body = null;
  try { body = await response.json(); } catch (_) { /* not JSON */ }
  if (!response.ok) {
    throw new ApiError(response.status, (body && body.error) || `${path}: HTTP ${response.status}`);
  }
  return body;
}

async function get(path) {
  return answer(await fetch(path, { cache: "no-store" }), path);
}

async function postJson(path, payload) {
  const response = await fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload),
  });
  return answer(response, path);
}

const post = (action, payload) => postJson(`/api/actions/${action}`, payload);

function showError(err) {
  const box = $("#error");
  box.hidden = !err;
  box.textContent = err ? err.message : "";
  box.dataset.status = err && err.status ? err.status : "";
}

const topicHref = (name) => `#/topics/${encodeURIComponent(name)}`;
const topicApi = (name) => `/api/topics/${encodeURIComponent(name)}`;
const groupHref = (id) => `#/groups/${encodeURIComponent(id)}`;

function pager(selector, at, total, onMove) {
  const box = $(selector);
  if (!box) return;
  const end = Math.min(at + PAGE, total);
  const prev = el("button", "‹ previous");
  const next = el("button", "next ›");
  prev.type = next.type = "button";
  prev.disabled = at === 0;
  next.disabled = end >= total;
  prev.onclick = () => onMove(Math.max(0, at - PAGE));
  next.onclick = () => onMove(at + PAGE);
  box.replaceChildren(prev, el("span", total ? `${count(at + 1)}–${count(end)} of ${count(total)}` : "none"), next);
}

function draw(canvas, points, series) {
  if (!canvas) return;
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 28, left = pad + 28;
  ctx.clearRect(0, 0, w, h);
  const max = Math.max(1, ...points.map((p) => Math.max(...series.map(([key]) => p[key]))));
  ctx.strokeStyle = "#e4e7ec";
  ctx.fillStyle = "#667085";
  ctx.font = "11px system-ui";
  for (let i = 0; i <= 4; i++) {
    const y = pad / 2 + ((h - pad) * i) / 4;
    ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(w, y); ctx.stroke();
    const tick = max * (1 - i / 4);
    ctx.fillText(max < 10 ? tick.toFixed(1) : Math.round(tick).toLocaleString("en-US"), 0, y + 4);
  }
  for (const [key, colour] of series) {
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.beginPath();
    points.forEach((p, i) => {
      const x = left + ((w - left) * i) / (HISTORY - 1);
      const y = pad / 2 + (h - pad) * (1 - p[key] / max);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
  }
}
