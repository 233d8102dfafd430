// Samsa console, a consumer group's page: state, members, offsets and lag per partition.
// A partition a member owns with no committed offset shows "no offset" (Kafka's tool
// prints "-"), and the total lag says how many partitions it could not count.
"use strict";

function lagTotal(g) {
  const parts = [el("span", `total lag ${count(g.lag)}`, "lag")];
  if (g.lag_uncounted) {
    const others = g.lag_uncounted - (g.no_offset || 0);
    const why = [g.no_offset && `${count(g.no_offset)} with no committed offset`,
      others && `${count(others)} with no log end on this broker`].filter(Boolean).join(", ");
    const plural = g.lag_uncounted === 1 ? "partition" : "partitions";
    parts.push(el("span", `not counted: ${count(g.lag_uncounted)} ${plural} (${why})`,
      "uncounted"));
  }
  return parts;
}

async function refreshGroup(route) {
  const g = await get(
    `/api/groups/${encodeURIComponent(route.group)}?offset=${state.partitionsAt}&limit=${PAGE}`);
  state.ops.group = g.authorized_operations || null;
  $("#group-name").textContent = g.group;
  $("#group-state").replaceChildren(el("span", `state ${g.state}`, "state"),
    el("span", `protocol ${g.protocol_type || "-"} / ${g.protocol || "-"}`),
    el("span", `${g.members.length} members`), ...lagTotal(g));
  fill("#group-members", g.members.length ? g.members.map((m) => row([m.member_id, m.client_id,
    m.host, Object.entries(m.assignment).map(([t, ps]) => `${t}: ${ps.join(",")}`).join("; ") || "-"]))
    : [noteRow("no members (the group is empty)")]);
  fill("#group-partitions", g.partitions.map((p) => {
    const noOffset = p.committed_offset === null;
    const tr = row([link(p.topic, topicHref(p.topic)), p.partition,
      noOffset ? "no offset" : p.committed_offset, p.log_end_offset,
      noOffset ? "no offset" : p.lag, p.member_id], [1, 2, 3, 4]);
    tr.dataset.partition = `${p.topic}-${p.partition}`;
    if (noOffset) {
      tr.classList.add("no-offset");
      tr.title = "no committed offset: not counted in the total lag";
    }
    if (p.lag > 0) tr.cells[4].classList.add("lag-high");
    return tr;
  }));
  pager("#group-pager", state.partitionsAt, g.partition_count, (at) => {
    state.partitionsAt = at; refresh();
  });
  const history = (state.lag[g.group] ||= []);
  history.push({ lag: g.lag });
  if (history.length > HISTORY) history.shift();
  draw($("#lag-chart"), history, [["lag", "#b91c1c"]]);
  gateActions();
}
