// Samsa console, the security page: ACLs (with adding and removing them), SCRAM users
// and client quotas. Each card reads its own call once per visit; a card the user
// may not read says why, and the others still show.
"use strict";

async function card(path, note, render) {
  // One card's call: its rows, or its refusal in the card's note.
  const box = $(note);
  try {
    const answer = await get(path);
    box.textContent = "";
    box.hidden = true;
    render(answer);
  } catch (err) {
    if (err.status === 401) throw err;
    box.hidden = false;
    box.className = "card-note error";
    box.textContent = err.message;
  }
}

function aclRow(a) {
  const remove = el("button", "remove", "secondary");
  remove.type = "button";
  remove.disabled = !state.actions || !(state.ops.cluster || []).includes("ALTER");
  remove.onclick = async () => {
    const out = $("#acl-result");
    if (await act("delete-acl", a, out)) refreshSecurity(state.route);
  };
  const tr = row([a.principal, a.host, a.permission, a.operation,
    `${a.resource_type} ${a.resource_name}`, a.pattern_type, remove]);
  tr.dataset.acl = [a.principal, a.operation, a.resource_type, a.resource_name].join(" ");
  if (a.permission === "DENY") tr.cells[2].classList.add("bad");
  return tr;
}

async function refreshSecurity() {
  const acls = card("/api/acls?limit=1000", "#acls-note", (answer) => {
    state.ops.cluster = answer.authorized_operations;
    $("#acl-count").textContent = answer.enabled ? `(${count(answer.total)})` : "";
    if (!answer.enabled) {
      const note = $("#acls-note");
      note.hidden = false;
      note.className = "card-note muted";
      note.textContent = "No authorizer on this broker (authorizer.class.name is not set): "
        + "every user may do everything, and there are no ACLs.";
    }
    fill("#acls", answer.acls.length || !answer.enabled ? answer.acls.map(aclRow)
      : [noteRow("no ACLs")]);
    gateActions();
  });
  const users = card("/api/users?limit=1000", "#users-note", (answer) => {
    $("#user-count").textContent = `(${count(answer.total)})`;
    fill("#scram-users", answer.users.length ? answer.users.map((u) => {
      const tr = row([u.user, u.mechanisms.map((m) => `${m.mechanism} (${count(m.iterations)})`)
        .join(", ")]);
      tr.dataset.user = u.user;
      return tr;
    }) : [noteRow("no SCRAM users in the metadata log")]);
  });
  const quotas = card("/api/quotas?limit=1000", "#quotas-note", (answer) => {
    $("#quota-count").textContent = `(${count(answer.total)})`;
    fill("#quotas", answer.quotas.length ? answer.quotas.map((q) => {
      const entity = Object.entries(q.entity)
        .map(([type, name]) => `${type} ${name === null ? "(default)" : name}`).join(", ");
      const tr = row([entity, Object.entries(q.values).map(([k, v]) => `${k}=${v}`).join(", ")]);
      tr.dataset.entity = entity;
      return tr;
    }) : [noteRow("no client quotas")]);
  });
  await Promise.all([acls, users, quotas]);
}
