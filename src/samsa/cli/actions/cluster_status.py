"""``samsa cluster status``: the quorum, the brokers and partition health in one view.

What an operator checks first when something is wrong, gathered from four
client calls so it works against Kafka too:

* the metadata quorum (DescribeQuorum): leader, epoch, high watermark, each
  voter and observer with its log end offset, how far it is behind the high
  watermark and how long ago it last fetched and was last caught up.  Ages
  are measured against the leader's own entry (which Kafka reports as the
  leader's "now"), so the tool's clock and any skew do not enter;
* the brokers (DescribeCluster): id, address, rack.  DescribeCluster (v0-1)
  lists only unfenced brokers, so a broker that the cluster knows of
  (a quorum observer, a voter, or a replica of some partition) but that is
  missing from that list is shown as fenced;
* partition health (Metadata, plus ``min.insync.replicas`` of every topic
  through DescribeConfigs): under-replicated (ISR smaller than the replicas),
  under min ISR (acks=all writes are refused) and offline (no leader);
* failed log dirs (DescribeLogDirs of every broker that answers): a dir an
  I/O error took offline, with its error (KAFKA_STORAGE_ERROR).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from rich.console import Console

from samsa.cli.common import console, open_admin, print_json, print_table
from samsa.client.admin import Admin, QuorumInfo, ReplicaInfo
from samsa.client.errors import KafkaTimeoutError
from samsa.errors import ErrorCode, KafkaError

MIN_ISR = "min.insync.replicas"


def run_status(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        status = gather(admin, args.timeout)
    if args.output == "json":
        print_json(status)
    else:
        render(status)
    return 0


def gather(admin: Admin, timeout: float) -> dict[str, Any]:
    cluster = admin.describe_cluster(timeout=timeout)
    names = sorted(admin.list_topics(timeout=timeout, include_internal=True))
    topics = admin.describe_topics(names, timeout=timeout) if names else {}
    configs = admin.describe_topic_configs(names, [MIN_ISR], timeout=timeout)
    partitions = partition_health(topics, configs)
    # Last: without an active controller the forwarded DescribeQuorum may hang until
    # the timeout, and the rest of the view should not wait behind it.
    quorum: QuorumInfo | None = None
    quorum_error = ""
    try:
        quorum = admin.describe_metadata_quorum(timeout=timeout)
    except (KafkaError, KafkaTimeoutError) as exc:
        # No quorum leader (an election, a lost majority) is exactly when the rest of
        # this view matters: brokers answer Metadata from the image they have, while
        # a DescribeQuorum they forward may get no answer at all.
        quorum_error = str(exc)
    replica_ids = {r for t in topics.values() for p in t.partitions for r in p.replicas}
    voters = {v.replica_id for v in quorum.voters} if quorum else set()
    observers = {o.replica_id for o in quorum.observers} if quorum else set()
    live = {b.node_id: b for b in cluster.brokers}
    try:
        failed_dirs = admin.failed_log_dirs(timeout=timeout)
    except (KafkaError, KafkaTimeoutError):
        failed_dirs = {}
    brokers = []
    for node_id in sorted(set(live) | observers | replica_ids):
        b = live.get(node_id)
        brokers.append(
            {
                "node_id": node_id,
                "host": b.host if b else None,
                "port": b.port if b else None,
                "rack": b.rack if b else None,
                "fenced": b is None,
                "voter": node_id in voters,
                "observer": node_id in observers,
                "offline_log_dirs": [
                    {"log_dir": log_dir, "error": _error_name(code)}
                    for log_dir, code in failed_dirs.get(node_id, [])
                ],
            }
        )
    return {
        "cluster_id": cluster.cluster_id,
        "quorum": quorum_view(quorum) if quorum else {"error": quorum_error},
        "brokers": brokers,
        "partitions": partitions,
    }


def quorum_view(quorum: QuorumInfo) -> dict[str, Any]:
    leader = next((v for v in quorum.voters if v.replica_id == quorum.leader_id), None)
    now_ms = leader.last_fetch_timestamp if leader and leader.last_fetch_timestamp >= 0 else -1
    if now_ms < 0:
        now_ms = time.time_ns() // 1_000_000

    def replica(r: ReplicaInfo, role: str) -> dict[str, Any]:
        return {
            "node_id": r.replica_id,
            "role": role,
            "directory_id": r.directory_id,
            "log_end_offset": r.log_end_offset,
            "lag": max(quorum.high_watermark - r.log_end_offset, 0)
            if r.log_end_offset >= 0
            else None,
            "last_fetch_ms_ago": _age(now_ms, r.last_fetch_timestamp),
            "last_caught_up_ms_ago": _age(now_ms, r.last_caught_up_timestamp),
            "endpoints": [f"{n}://{h}:{p}" for n, h, p in quorum.endpoints.get(r.replica_id, ())],
        }

    voters = sorted(quorum.voters, key=lambda v: (v.replica_id != quorum.leader_id, v.replica_id))
    return {
        "leader_id": quorum.leader_id,
        "leader_epoch": quorum.leader_epoch,
        "high_watermark": quorum.high_watermark,
        "voters": [
            replica(v, "leader" if v.replica_id == quorum.leader_id else "follower") for v in voters
        ],
        "observers": [
            replica(o, "observer") for o in sorted(quorum.observers, key=lambda o: o.replica_id)
        ],
    }


def _age(now_ms: int, timestamp: int) -> int | None:
    return None if timestamp < 0 else max(now_ms - timestamp, 0)


def partition_health(
    topics: dict[str, Any], configs: dict[str, dict[str, str | None]]
) -> dict[str, Any]:
    total = 0
    problems: dict[str, list[dict[str, Any]]] = {
        "under_replicated": [],
        "under_min_isr": [],
        "offline": [],
    }
    for name in sorted(topics):
        min_isr = _int(configs.get(name, {}).get(MIN_ISR), 1)
        for p in topics[name].partitions:
            total += 1
            entry = {
                "topic": name,
                "partition": p.partition,
                "leader": p.leader if p.leader >= 0 else None,
                "replicas": list(p.replicas),
                "isr": list(p.isr),
                "min_isr": min_isr,
            }
            if len(p.isr) < len(p.replicas):
                problems["under_replicated"].append(entry)
            if len(p.isr) < min_isr:
                problems["under_min_isr"].append(entry)
            if p.leader < 0:
                problems["offline"].append(entry)
    return {"topics": len(topics), "total": total, **problems}


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


# -- rendering --------------------------------------------------------------------------


def render(status: dict[str, Any]) -> None:
    con = console()
    q = status["quorum"]
    if "error" in q:
        con.print(f"[bold]Cluster[/bold] {status['cluster_id'] or '-'}")
        con.print(f"[bold]Metadata quorum unavailable:[/bold] {q['error']}")
    else:
        render_quorum(con, status["cluster_id"], q)
    con.print()
    render_brokers_and_partitions(con, status)


def render_quorum(con: Console, cluster_id: str | None, q: dict[str, Any]) -> None:
    con.print(
        f"[bold]Cluster[/bold] {cluster_id or '-'}  "
        f"[bold]quorum leader[/bold] {q['leader_id']} (epoch {q['leader_epoch']})  "
        f"[bold]high watermark[/bold] {q['high_watermark']}"
    )
    con.print()
    print_table(
        con,
        (
            "NODE",
            "ROLE",
            "LOG-END",
            "LAG",
            "LAST-FETCH",
            "LAST-CAUGHT-UP",
            "DIRECTORY-ID",
            "ENDPOINTS",
        ),
        [
            (
                r["node_id"],
                r["role"],
                r["log_end_offset"],
                r["lag"],
                _ago(r["last_fetch_ms_ago"]),
                _ago(r["last_caught_up_ms_ago"]),
                r["directory_id"],
                ",".join(r["endpoints"]) or None,
            )
            for r in q["voters"] + q["observers"]
        ],
        title="Metadata quorum",
    )


def render_brokers_and_partitions(con: Console, status: dict[str, Any]) -> None:
    print_table(
        con,
        ("BROKER", "HOST:PORT", "RACK", "STATE", "QUORUM"),
        [
            (
                b["node_id"],
                f"{b['host']}:{b['port']}" if b["host"] is not None else None,
                b["rack"],
                "fenced" if b["fenced"] else "active",
                "voter" if b["voter"] else "observer" if b["observer"] else None,
            )
            for b in status["brokers"]
        ],
        title="Brokers",
    )
    for b in status["brokers"]:
        for failed in b.get("offline_log_dirs", []):
            con.print(
                f"[bold red]broker {b['node_id']}: log dir {failed['log_dir']} offline "
                f"({failed['error']})[/bold red]"
            )
    con.print()
    p = status["partitions"]
    con.print(
        f"[bold]Partitions[/bold] {p['total']} in {p['topics']} topics: "
        f"{len(p['under_replicated'])} under-replicated, {len(p['under_min_isr'])} under min ISR, "
        f"{len(p['offline'])} offline"
    )
    rows = _problem_rows(p)
    if rows:
        print_table(
            con, ("TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "MIN-ISR", "PROBLEM"), rows
        )


def _problem_rows(p: dict[str, Any]) -> list[tuple[Any, ...]]:
    found: dict[tuple[str, int], tuple[dict[str, Any], list[str]]] = {}
    for kind, label in (
        ("offline", "offline"),
        ("under_min_isr", "under min ISR"),
        ("under_replicated", "under-replicated"),
    ):
        for entry in p[kind]:
            key = (entry["topic"], entry["partition"])
            found.setdefault(key, (entry, []))[1].append(label)
    return [
        (
            e["topic"],
            e["partition"],
            e["leader"],
            ",".join(map(str, e["replicas"])),
            ",".join(map(str, e["isr"])) or None,
            e["min_isr"],
            ", ".join(labels),
        )
        for (e, labels) in (found[k] for k in sorted(found))
    ]


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def _ago(ms: int | None) -> str | None:
    if ms is None:
        return None
    return f"{ms} ms ago" if ms < 10_000 else f"{ms / 1000:.0f} s ago"
