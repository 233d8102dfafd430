// Samsa console, the login: shown when the broker asks for one (an API call
// answered 401), with the SASL mechanisms of the listener whose users log in.
// The session is an HttpOnly cookie: this script never sees it.
"use strict";

async function loadLogin() {
  state.login = await get("/api/login");
  if (!state.login.login) return;
  try {
    state.user = await get("/api/whoami");
  } catch (err) {
    if (err.status !== 401) throw err;
    state.user = null;
  }
  showUser();
}

function showUser() {
  const box = $("#user");
  box.hidden = !(state.login && state.login.login);
  $("#user-name").textContent = state.user ? state.user.principal : "not logged in";
  $("#signed-in").hidden = !state.user;
  $("#logout").hidden = !state.user;
}

function showLogin(message) {
  clearTimeout(timer);
  state.user = null;
  showUser();
  state.route = { page: "login" };
  document.body.dataset.page = "login";
  document.body.dataset.loaded = "true";
  showError(null);
  $("#view").replaceChildren($("#page-login").content.cloneNode(true));
  const form = $("#login");
  const select = form.elements.mechanism;
  for (const name of state.login.mechanisms) select.append(new Option(name, name));
  $("#login-token").hidden = !state.login.token;
  $("#login-password").hidden = !state.login.mechanisms.length;
  const out = $("#login-result");
  out.textContent = message || "";
  form.onsubmit = async (event) => {
    event.preventDefault();
    const token = form.elements.token.value.trim();
    const payload = token ? { token } : {
      username: form.elements.username.value, password: form.elements.password.value,
    };
    if (!token && select.value) payload.mechanism = select.value;
    out.className = "result";
    out.textContent = "logging in…";
    try {
      state.user = await postJson("/api/login", payload);
    } catch (err) {
      out.className = "result error";
      out.textContent = err.message;
      form.elements.password.value = "";
      return;
    }
    showUser();
    show();
  };
  form.elements[state.login.mechanisms.length ? "username" : "token"].focus();
}

async function logout() {
  try { await postJson("/api/logout", {}); } catch (_) { /* the session is gone either way */ }
  showLogin("logged out");
}
