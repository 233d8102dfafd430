// Samsa console, the last part: one page per hash route (#/, #/cluster, #/security,
// #/brokers/ID, #/topics/NAME, #/topics/NAME/messages?..., #/groups/ID), refreshed
// every second (the pages marked "once" are read once per visit).
"use strict";

// ---------------------------------------------------------------- routing

function parseRoute() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").map(decodeURIComponent);
  if (parts[0] === "cluster") return { page: "cluster" };
  if (parts[0] === "security") return { page: "security" };
  if (parts[0] === "brokers" && parts[1]) return { page: "broker", broker: parts[1] };
  if (parts[0] === "topics" && parts[1]) {
    return { page: parts[2] === "messages" ? "messages" : "topic", topic: parts[1], params };
  }
  if (parts[0] === "subjects") {
    return parts[1] ? { page: "subject", subject: parts.slice(1).join("/"), params } : { page: "subjects" };
  }
  if (parts[0] === "groups" && parts.length > 1) {
    return { page: "group", group: parts.slice(1).join("/") };
  }
  return { page: "overview" };
}

function show() {
  const route = parseRoute();
  state.route = route;
  document.body.dataset.loaded = "false";
  document.body.dataset.page = route.page;
  delete document.body.dataset.search;
  state.search = null;
  state.shown = null;
  state.ops = {};
  showError(null);
  showMissing(null);
  $("#view").replaceChildren($(`#page-${route.page}`).content.cloneNode(true));
  document.querySelectorAll("nav a").forEach((a) =>
    a.classList.toggle("current", a.dataset.nav === route.page
      || (a.dataset.nav === "subjects" && route.page === "subject")));
  state.totals = null;
  state.partitionsAt = 0;
  const page = PAGES[route.page];
  if (page.setup) page.setup(route);
  wireActions(route);
  refresh();
}

// ---------------------------------------------------------------- header

function showHeader(c) {
  $("#cluster-id").textContent = c.cluster_id;
  $("#version").textContent = `samsa ${c.version}`;
  $("#uptime").textContent = `${c.uptime_s}s`;
  const changed = state.actions !== c.actions_enabled
    || String(state.ops.cluster) !== String(c.cluster_authorized_operations);
  state.actions = c.actions_enabled;
  state.ops.cluster = c.cluster_authorized_operations || null;
  document.body.dataset.actions = c.actions_enabled;
  if (changed) gateActions();
  $("#mode").textContent = c.actions_enabled ? "actions enabled" : "read-only";
  $("#brokers").textContent = `brokers: ${c.brokers.map((b) => `${b.node_id} (${b.state})`).join(", ")}`
    + ` · controller ${c.controller_id} · this is node ${c.node_id}`;
}

// ---------------------------------------------------------------- loop

const PAGES = {
  overview: {
    setup() {
      const filter = $("#topic-filter");
      filter.value = state.topicFilter;
      filter.oninput = () => { state.topicFilter = filter.value; state.topicsAt = 0; refresh(); };
    },
    refresh: refreshOverview,
  },
  topic: { setup: setupTopic, refresh: refreshTopic },
  messages: { setup: setupMessages, refresh: refreshMessages, once: true },
  group: { refresh: refreshGroup },
  cluster: { refresh: null },
  subjects: { setup: setupSubjects, refresh: refreshSubjects },
  subject: { setup: setupSubject, refresh: refreshSubject, once: true },
  broker: { refresh: refreshBroker, once: true },
  security: { refresh: refreshSecurity, once: true },
};

function showMissing(route, err) {
  // A page whose topic, group or broker does not exist (404) or is not the user's
  // to see (403): the banner says so, and instead of the page's empty tables and
  // forms, a way back.
  const box = $("#missing");
  document.body.dataset.missing = route ? "true" : "false";
  box.hidden = !route;
  if (!route) return;
  const back = [link("‹ back to the overview", "#/")];
  if (route.page === "messages" && !/topic .* does not exist/.test(err.message)) {
    back.unshift(link(`‹ back to topic ${route.topic}`, topicHref(route.topic)));
  }
  if (route.page === "broker") back.unshift(link("‹ back to the cluster", "#/cluster"));
  box.replaceChildren(...back);
}

let timer = null;

async function refresh(fromTimer) {
  clearTimeout(timer);
  const route = state.route;
  const page = PAGES[route.page];
  try {
    // The header (/api/brokers) and the page's own data are fetched together; the
    // cluster page's answer holds both.
    let ran = true;
    if (route.page === "cluster") {
      const cluster = await get("/api/cluster");
      showHeader(cluster);
      refreshCluster(cluster);
    } else {
      const header = get("/api/brokers").then(showHeader);
      if (page.refresh && !(fromTimer && page.once)) await Promise.all([header, page.refresh(route)]);
      else {
        await header;
        ran = false; // a page read once (the message browser) keeps what it showed
      }
    }
    if (state.route === route && ran) {
      showError(null);
      showMissing(null);
      document.body.dataset.loaded = "true";
    }
  } catch (err) {
    if (err.status === 401 && state.login && state.login.login) {
      showLogin(state.user ? "the session ended: log in again" : "");
      return;
    }
    if (state.route === route) {
      showError(err);
      if (err.status === 404 || err.status === 403) {
        if (route.page !== "overview") showMissing(route, err);
      }
      document.body.dataset.loaded = "error";
    }
  }
  clearTimeout(timer);
  timer = setTimeout(() => refresh(true), 1000);
}

async function start() {
  $("#logout").onclick = logout;
  try {
    await loadLogin();
  } catch (err) {
    showError(err);
  }
  window.addEventListener("hashchange", show);
  if (state.login && state.login.login && !state.user) showLogin();
  else show();
}

start();
