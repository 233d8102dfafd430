// Samsa console: polls the broker's read-only JSON API once a second and
// redraws. Plain DOM and canvas, no libraries, nothing loaded from elsewhere.
"use strict";

const HISTORY = 60; // seconds of rates on the chart
const state = { topic: null, group: null, last: null, points: [] };
window.samsaChart = state; // tests read the points the chart drew

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function row(cells, numeric) {
  const tr = el("tr");
  cells.forEach((cell, i) => {
    const td = cell instanceof Node ? (() => { const t = el("td"); t.append(cell); return t; })()
      : el("td", cell === null || cell === undefined ? "-" : cell);
    if (numeric && numeric.includes(i)) td.classList.add("num");
    tr.append(td);
  });
  return tr;
}

function fill(tableId, rows) {
  const body = document.querySelector(`#${tableId} tbody`);
  body.replaceChildren(...rows);
}

function bytes(n) {
  if (n === null || n === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function shown(preview) {
  if (preview === null) return el("span", "null", "binary");
  const span = el("span", preview.text, preview.binary ? "binary" : "");
  span.title = `${preview.size} bytes${preview.binary ? ", not UTF-8 (hex)" : ""}`;
  return span;
}

async function get(path) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

async function refreshCluster() {
  const c = await get("/api/cluster");
  document.getElementById("cluster-id").textContent = c.cluster_id;
  document.getElementById("version").textContent = `samsa ${c.version}`;
  document.getElementById("uptime").textContent = `${c.uptime_s}s`;
  document.getElementById("brokers").textContent =
    "brokers: " + c.brokers.map((b) => `${b.node_id} (${b.host}:${b.port})`).join(", ") +
    ` · controller ${c.controller_id}`;
}

async function refreshTopics() {
  const topics = await get("/api/topics");
  fill("topics", topics.map((t) => {
    const tr = row([t.name, t.partitions, t.records, bytes(t.size_bytes)], [1, 2, 3]);
    tr.classList.add("link");
    tr.dataset.topic = t.name;
    if (t.name === state.topic) tr.classList.add("selected");
    tr.onclick = () => { state.topic = t.name; refreshTopic(); };
    return tr;
  }));
}

async function refreshTopic() {
  if (!state.topic) return;
  const name = encodeURIComponent(state.topic);
  const [topic, records] = await Promise.all([
    get(`/api/topics/${name}`), get(`/api/topics/${name}/records?limit=20`),
  ]);
  document.getElementById("topic-detail").hidden = false;
  document.getElementById("topic-name").textContent = topic.name;
  fill("partitions", topic.partitions.map((p) => {
    const tr = row([p.partition, p.leader, p.replicas.join(","), p.isr.join(","),
      p.log_start_offset, p.log_end_offset, bytes(p.size_bytes), p.segments], [0, 4, 5, 6, 7]);
    tr.dataset.partition = p.partition;
    return tr;
  }));
  fill("records", records.map((r) => {
    const headers = r.headers.map((h) => `${h.key}=${h.value ? h.value.text : "null"}`).join(", ");
    const tr = row([r.partition, r.offset, new Date(r.timestamp).toISOString(),
      shown(r.key), shown(r.value), headers], [0, 1]);
    tr.cells[3].classList.add("value");
    tr.cells[4].classList.add("value");
    return tr;
  }));
  fill("configs", topic.configs.map((c) => row([c.name, c.value, c.default ? "default" : "set"])));
}

async function refreshGroups() {
  const groups = await get("/api/groups");
  fill("groups", groups.map((g) => {
    const tr = row([g.group, g.state, g.members.length, g.lag], [2, 3]);
    tr.classList.add("link");
    tr.dataset.group = g.group;
    if (g.group === state.group) tr.classList.add("selected");
    tr.onclick = () => { state.group = g.group; showGroup(g); };
    return tr;
  }));
  const selected = groups.find((g) => g.group === state.group);
  if (selected) showGroup(selected);
}

function showGroup(g) {
  document.getElementById("group-detail").hidden = false;
  document.getElementById("group-name").textContent = `${g.group} (${g.state})`;
  fill("group-members", g.members.map((m) => row([m.member_id, m.client_id, m.host,
    Object.entries(m.assignment).map(([t, ps]) => `${t}:${ps.join(",")}`).join(" ")])));
  fill("group-partitions", g.partitions.map((p) => {
    const tr = row([p.topic, p.partition, p.committed_offset, p.log_end_offset, p.lag, p.member_id],
      [1, 2, 3, 4]);
    if (p.lag > 0) tr.cells[4].classList.add("lag-high");
    return tr;
  }));
}

async function refreshRates() {
  const now = await get("/api/rates");
  if (state.last) {
    const dt = Math.max(now.time - state.last.time, 0.001);
    const point = {
      in: (now.records_in - state.last.records_in) / dt,
      out: (now.records_out - state.last.records_out) / dt,
    };
    state.points.push(point);
    if (state.points.length > HISTORY) state.points.shift();
    document.getElementById("rate-in").textContent = Math.round(point.in).toLocaleString();
    document.getElementById("rate-out").textContent = Math.round(point.out).toLocaleString();
  }
  state.last = now;
  draw();
}

function draw() {
  const canvas = document.getElementById("chart");
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 28;
  ctx.clearRect(0, 0, w, h);
  const max = Math.max(1, ...state.points.map((p) => Math.max(p.in, p.out)));
  ctx.strokeStyle = "#e4e7ec";
  ctx.fillStyle = "#667085";
  ctx.font = "11px system-ui";
  for (let i = 0; i <= 4; i++) {
    const y = pad / 2 + ((h - pad) * i) / 4;
    ctx.beginPath(); ctx.moveTo(pad + 20, y); ctx.lineTo(w, y); ctx.stroke();
    const tick = max * (1 - i / 4);
    ctx.fillText(max < 10 ? tick.toFixed(1) : Math.round(tick).toLocaleString(), 0, y + 4);
  }
  for (const [key, colour] of [["in", "#2563eb"], ["out", "#16a34a"]]) {
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.beginPath();
    state.points.forEach((p, i) => {
      const x = pad + 20 + ((w - pad - 20) * i) / (HISTORY - 1);
      const y = pad / 2 + (h - pad) * (1 - p[key] / max);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
  }
}

async function tick() {
  try {
    await Promise.all([refreshCluster(), refreshTopics(), refreshGroups(), refreshRates(),
      refreshTopic()]);
    document.body.dataset.loaded = "true";
  } catch (err) {
    console.error(err);
  }
  setTimeout(tick, 1000);
}

tick();
