// Samsa console, config tables (a topic's, a broker's): overrides first and marked,
// each raw value with its units beside it ("604800000" and "7 d").
"use strict";

function configValue(c) {
  const cell = el("span", null, "config-value");
  cell.append(el("code", c.value === null || c.value === undefined ? "-" : c.value, "raw"));
  if (c.human) cell.append(el("span", c.human, "human"));
  return cell;
}

function sortedConfigs(configs) {
  // Overrides (set on the resource or the broker, not Kafka's default) first.
  return [...configs].sort((a, b) => (b.override - a.override) || a.name.localeCompare(b.name));
}

function fillConfigs(selector, configs, onPick) {
  fill(selector, sortedConfigs(configs).map((c) => {
    const source = el("span", c.source, c.override ? "source override" : "source");
    const tr = row([c.name, configValue(c), source]);
    tr.dataset.config = c.name;
    if (c.override) tr.classList.add("override");
    if (c.read_only) tr.title = "read-only";
    if (onPick) tr.onclick = () => onPick(c);
    return tr;
  }));
  return configs.filter((c) => c.override).length;
}

// ---------------------------------------------------------------- broker configs

async function refreshBroker(route) {
  const b = await get(`/api/brokers/${encodeURIComponent(route.broker)}/configs`);
  $("#broker-id").textContent = b.node_id;
  const filter = $("#config-filter");
  const show = () => {
    const needle = filter.value.toLowerCase();
    const shown = b.configs.filter((c) => c.name.includes(needle)
      || String(c.value).toLowerCase().includes(needle));
    const overrides = fillConfigs("#broker-configs", shown);
    $("#broker-override-count").textContent =
      `(${count(shown.length)} · ${count(overrides)} overrides)`;
  };
  filter.oninput = show;
  show();
}
