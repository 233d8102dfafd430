// Samsa console, the schema registry's pages: subjects, a subject's versions and the diff
// between two of them, and the message browser's records decoded with their schemas.
// Loaded before app.js, which routes #/subjects and #/subjects/NAME here.
"use strict";

const subjectHref = (name) => `#/subjects/${encodeURIComponent(name)}`;

// A record's key or value, with what it decodes to beside it when it carries a schema id.
function withSchema(box, decoded) {
  if (!decoded) return box;
  const wrap = el("div", null, "with-schema");
  const panel = el("div", null, "decoded");
  const ref = decoded.subject
    ? link(`schema ${decoded.id} · ${decoded.subject} v${decoded.version} · ${decoded.type}`,
      subjectHref(decoded.subject))
    : el("span", `schema ${decoded.id}`);
  ref.classList.add("schema-ref");
  panel.append(ref);
  if (decoded.error) panel.append(el("span", decoded.error, "bad schema-error"));
  else panel.append(el("pre", decoded.json, "value json decoded-json"));
  wrap.append(box, panel);
  return wrap;
}

function registryNote(s) {
  if (!s.registry) return "This cluster has no schema registry: start a broker with --registry-listen.";
  if (s.starting) return "This broker is reading the registry's topic…";
  return `${count(s.subjects.length)} subjects`;
}

async function refreshSubjects() {
  const filter = $("#subject-filter").value.trim();
  const s = await get(`/api/subjects${filter ? `?q=${encodeURIComponent(filter)}` : ""}`);
  $("#subjects-status").textContent = registryNote(s);
  fill("#subjects", s.subjects.map((x) => row([link(x.subject, subjectHref(x.subject)),
    x.version, x.id, x.type, x.compatibility || "?"], [1, 2])));
}

function setupSubjects() {
  $("#subject-filter").oninput = () => refresh();
}

function setupSubject(route) {
  const show = () => {
    const query = new URLSearchParams();
    query.set("from", $("#diff-from").value);
    query.set("to", $("#diff-to").value);
    location.hash = `${subjectHref(route.subject)}?${query}`;
  };
  $("#diff-from").onchange = show;
  $("#diff-to").onchange = show;
}

function options(select, versions, chosen) {
  select.replaceChildren(...versions.map((v) => {
    const o = el("option", `version ${v.version} (id ${v.id})`);
    o.value = v.version;
    o.selected = v.version === chosen;
    return o;
  }));
}

async function refreshSubject(route) {
  const name = encodeURIComponent(route.subject);
  const s = await get(`/api/subjects/${name}`);
  $("#subject-name").textContent = s.subject;
  $("#subject-stats").replaceChildren(
    el("span", `${s.versions.length} versions`),
    el("span", `compatibility ${s.compatibility || "?"}`, "subject-compatibility"),
    el("span", `mode ${s.mode || "?"}`));
  fill("#versions", s.versions.map((v) => row([v.version, v.id, v.type,
    v.references.length ? v.references.map((r) => `${r.name} → ${r.subject} v${r.version}`).join(", ") : "-"],
  [0, 1])));
  const numbers = s.versions.map((v) => v.version);
  const newest = Math.max(...numbers);
  const to = Number(route.params.get("to")) || newest;
  const from = Number(route.params.get("from")) || Math.max(numbers[0], to === newest && numbers.length > 1 ? numbers[numbers.length - 2] : to);
  options($("#diff-from"), s.versions, from);
  options($("#diff-to"), s.versions, to);
  const shown = s.versions.find((v) => v.version === to) || s.versions[s.versions.length - 1];
  $("#schema-text").textContent = shown.schema;
  $("#schema-caption").textContent = `version ${shown.version} (id ${shown.id}, ${shown.type})`;
  const d = await get(`/api/subjects/${name}/diff?from=${from}&to=${to}`);
  const lines = d.diff.length ? d.diff : [`versions ${from} and ${to} are the same`];
  $("#diff").replaceChildren(...lines.map((line) => {
    const cls = line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : "same";
    return el("div", line, `diff-line ${cls}`);
  }));
}
