// Samsa console, the cluster page: brokers, partition health, the metadata quorum, the
// log cleaner and this broker's requests (one call, /api/cluster, every second).
"use strict";

function refreshCluster(c) {
  // Each broker describes its own configs: this one's are a page here.
  $("#broker-configs-link").href = `#/brokers/${c.node_id}`;
  fill("#cluster-brokers", c.brokers.map((b) => {
    const node = b.node_id === c.node_id ? link(b.node_id, `#/brokers/${b.node_id}`) : b.node_id;
    const tr = row([node, `${b.host}:${b.port}`, b.rack, b.state, count(b.partitions_led)],
      [4]);
    tr.dataset.broker = b.node_id;
    tr.cells[3].classList.add(b.state === "active" ? "good" : "bad");
    return tr;
  }));
  const counts = c.partitions;
  fill("#partition-health", [["partitions", counts.partitions], ["under-replicated",
    counts.under_replicated], ["under min ISR", counts.under_min_isr], ["offline", counts.offline],
  ["ISR shrinks / expands (this broker)", `${c.isr.shrinks} / ${c.isr.expands}`]]
    .map(([label, value]) => {
      const tr = row([label, value], [1]);
      tr.dataset.count = label;
      if (label !== "partitions" && typeof value === "number" && value > 0) {
        tr.cells[1].classList.add("bad");
      }
      return tr;
    }));
  const q = c.quorum;
  if (q.available) {
    $("#quorum-summary").replaceChildren(el("span", `leader ${q.leader}`),
      el("span", `epoch ${q.leader_epoch}`), el("span", `high watermark ${count(q.high_watermark)}`));
    fill("#quorum", [...q.voters.map((v) => ["voter", v]), ...q.observers.map((v) => ["observer", v])]
      .map(([role, v]) => row([v.node_id, v.node_id === q.leader ? `${role} (leader)` : role,
        count(v.log_end_offset), count(v.lag)], [2, 3])));
  } else {
    $("#quorum-summary").replaceChildren(el("span", `unavailable: ${q.error}`, "bad"));
    fill("#quorum", []);
  }
  const cl = c.cleaner;
  fill("#cleaner", cl ? [row(["passes", count(cl.passes)], [1]),
    row(["logs cleaned", count(cl.logs_cleaned)], [1]),
    row(["bytes reclaimed", bytes(cl.bytes_reclaimed)], [1]),
    row(["uncleanable", Object.keys(cl.uncleanable).join(", ") || "none"])]
    : [row(["cleaner", "disabled"])]);
  fill("#requests", c.requests.map((r) => row([r.api, r.version, count(r.count), count(r.errors),
    r.mean_ms.toFixed(2)], [1, 2, 3, 4])));
}
