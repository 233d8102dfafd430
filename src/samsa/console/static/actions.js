// Samsa console, the action forms: what each sends, and which of them the user may use.
// A form names its action (data-action) and what its Kafka request needs
// (data-needs="OPERATION resource", checked against the authorized operations the
// page was given); a destructive one (data-confirm) wants the topic's name typed.
"use strict";

function headerPairs(text) {
  // "name=value" a line; a line without "=" is a header with no value.
  return text.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    const at = line.indexOf("=");
    return at < 0 ? [line, null] : [line.slice(0, at).trim(), line.slice(at + 1)];
  });
}

// How each form's fields become the action's JSON body (the rest: one field each).
const PAYLOADS = {
  produce(form, payload) {
    delete payload.headers;
    const headers = headerPairs(form.elements.headers.value);
    if (headers.length) payload.headers = headers;
  },
  "alter-configs"(form, payload, submitter) {
    const name = form.elements.name.value.trim();
    for (const key of ["name", "value", "op"]) delete payload[key];
    if (submitter && submitter.value === "delete") payload.delete = [name];
    else payload.set = { [name]: form.elements.value.value };
  },
};

function formPayload(form, route, submitter) {
  const payload = {};
  for (const input of form.elements) {
    if (!input.name || input.value === "" || input.type === "submit") continue;
    payload[input.name] = input.type === "number" ? Number(input.value) : input.value;
  }
  if (route.topic) payload.topic = route.topic;
  if (route.group) payload.group = route.group;
  const build = PAYLOADS[form.dataset.action];
  if (build) build(form, payload, submitter);
  return payload;
}

function doneText(result) {
  return "done: " + Object.entries(result).filter(([k]) => k !== "ok")
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" ");
}

async function act(action, payload, out) {
  // Run one action; its answer (or refusal) goes to ``out``. True when done.
  try {
    const result = await post(action, payload);
    out.className = "result ok";
    out.textContent = doneText(result);
    return result;
  } catch (err) {
    out.className = "result error";
    out.textContent = err.message;
    return null;
  } finally {
    out.hidden = false;
  }
}

function wireActions(route) {
  document.querySelectorAll("form[data-action]").forEach((form) => {
    const confirm = form.elements.confirm;
    if (confirm) confirm.oninput = () => gateActions();
    form.onsubmit = async (event) => {
      event.preventDefault();
      const payload = formPayload(form, route, event.submitter);
      const out = form.closest("section").querySelector(".result") || $("#error");
      const result = await act(form.dataset.action, payload, out);
      if (!result) return;
      if (confirm) confirm.value = "";
      if (form.dataset.action === "create-topic") location.hash = topicHref(payload.name);
      else if (form.dataset.action === "delete-topic") location.hash = "#/";
      else refresh();
    };
  });
  gateActions();
}

function refusedBy(form) {
  // Why the form cannot be used (null: it can): actions off, or an operation
  // the user's ACLs refuse on the page's topic, group or the cluster.
  if (!state.actions) return "read-only: this broker refuses actions";
  if (!form.dataset.needs) return null;
  const [operation, on] = form.dataset.needs.split(" ");
  const allowed = state.ops[on];
  if (!allowed || allowed.includes(operation)) return null;
  const route = state.route || {};
  const name = on === "topic" ? route.topic : on === "group" ? route.group : "kafka-cluster";
  const who = state.user ? state.user.principal : "this user";
  return `not allowed: ${who} needs ${operation} on ${on.toUpperCase()} ${name}`;
}

function gateActions() {
  // Disable what would be refused and say why; a destructive form's button
  // waits for the topic's name.
  document.querySelectorAll("form[data-action]").forEach((form) => {
    const why = refusedBy(form);
    form.dataset.off = why ? (state.actions ? "acl" : "read-only") : "";
    for (const input of form.elements) input.disabled = Boolean(why);
    if ("confirm" in form.dataset && !why) {
      const typed = form.elements.confirm.value;
      form.querySelector("button").disabled = typed !== (state.route || {}).topic;
    }
    let note = form.querySelector(".why");
    if (why && state.actions) {
      if (!note) {
        note = el("p", null, "why");
        form.append(note);
      }
      note.textContent = why;
    } else if (note) note.remove();
  });
}
