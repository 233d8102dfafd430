"""The topic list and the topic page: partitions, configs with their source, rates.

Partitions come from the metadata image (leader, replicas, ISR: the cluster's
view, so a fenced broker's partitions show as under-replicated on every
console) with the offsets, size, last stable offset and open transactions of
this broker's replica when it hosts one.  Lists are paginated and counted here, so a topic of 10,000 partitions
sends one page of rows, never all of them.  Configs come from the
DescribeConfigs handler itself, so their values and sources are what every
Kafka client is told (``configs``).  ``authorized_operations`` lets the page
grey out the actions the caller would be refused.

A topic with ``remote.storage.enable=true`` shows both tiers: per partition
hosted here, where the local log starts and its size, where the partition
starts counting the remote tier, the last offset the remote tier holds, its
size and segments, and the copy lag (rolled segments not copied yet); and
the same summed over the topic's partitions hosted here (``tiers``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from samsa.console.configs import topic_configs
from samsa.console.context import TOPIC, ConsoleContext
from samsa.console.params import page_window
from samsa.http.messages import Request, Response, json_response

if TYPE_CHECKING:
    from samsa.console.broker_port import PartitionTiers
    from samsa.controller.image.registrations import PartitionRegistration

MAX_PAGE = 1000
# The topic list's records and sizes sum every partition: an open overview page
# asks each second, so the sums are reused for this long (a 10,000-partition
# topic takes tens of milliseconds to add up).
STORED_MAX_AGE_S = 5.0


def min_isr(ctx: ConsoleContext, topic: str) -> int:
    """The topic's min.insync.replicas: its override, else the broker's default
    (read without merging every default, since the cluster page asks per topic)."""
    value = ctx.broker.image.topic_configs(topic).get("min.insync.replicas")
    try:
        return int(value if value is not None else ctx.broker.setting("min.insync.replicas"))
    except (KeyError, ValueError):
        return 1


def health(registration: PartitionRegistration, min_insync: int) -> dict[str, bool]:
    offline = registration.leader < 0
    return {
        "offline": offline,
        "under_replicated": len(registration.isr) < len(registration.replicas),
        "under_min_isr": not offline and len(registration.isr) < min_insync,
    }


def count_health(
    counts: dict[str, int], registrations: Iterable[PartitionRegistration], min_insync: int
) -> None:
    """Add the partitions' flags to ``counts`` (the same rules as ``health``, without
    a dict per partition: the cluster page counts every partition each second)."""
    for registration in registrations:
        isr = len(registration.isr)
        if registration.leader < 0:
            counts["offline"] += 1
        elif isr < min_insync:
            counts["under_min_isr"] += 1
        if isr < len(registration.replicas):
            counts["under_replicated"] += 1


def partition_row(
    ctx: ConsoleContext,
    topic: str,
    index: int,
    registration: PartitionRegistration,
    min_insync: int,
) -> dict[str, Any]:
    local = ctx.broker.replica(topic, index)
    row: dict[str, Any] = {
        "partition": index,
        "leader": registration.leader,
        "leader_epoch": registration.leader_epoch,
        "replicas": list(registration.replicas),
        "isr": list(registration.isr),
        **health(registration, min_insync),
        "log_start_offset": None,
        "log_end_offset": None,
        "size_bytes": None,
        "last_stable_offset": None,
        "lso_lag": None,
        "open_transactions": None,
    }
    if local is not None:
        high_watermark = local.high_watermark
        stable = local.last_stable_offset
        row["log_start_offset"] = local.log_start_offset
        row["log_end_offset"] = high_watermark
        row["size_bytes"] = local.log.size_bytes
        # What read_committed consumers cannot read yet, and the transactions
        # holding it back (as this replica knows them).
        row["last_stable_offset"] = stable
        row["lso_lag"] = high_watermark - stable
        row["open_transactions"] = len(local.producer_state.ongoing_transactions())
    tiers = ctx.broker.tiers(topic, index)
    row["tiers"] = None if tiers is None else _tier_row(tiers)
    return row


def _tier_row(tiers: PartitionTiers) -> dict[str, Any]:
    return {
        "local_log_start_offset": tiers.local_log_start_offset,
        "local_size_bytes": tiers.local_size_bytes,
        "log_start_offset": tiers.log_start_offset,
        "tiered_end_offset": tiers.tiered_end_offset,
        "remote_size_bytes": tiers.remote_size_bytes,
        "remote_segments": tiers.remote_segments,
        "copy_lag_bytes": tiers.copy_lag_bytes,
        "copy_lag_segments": tiers.copy_lag_segments,
        "ready": tiers.ready,
    }


def tier_totals(ctx: ConsoleContext, name: str) -> dict[str, Any] | None:
    """Both tiers summed over the topic's partitions hosted here (None: the
    topic is not tiered).  The remote tier starts at the lowest partition
    start and ends at the highest tiered offset, as the per-partition figures
    would be read at a glance."""
    if ctx.broker.image.topic_configs(name).get("remote.storage.enable", "").lower() != "true":
        return None
    totals = {
        "partitions": 0,
        "local_size_bytes": 0,
        "remote_size_bytes": 0,
        "remote_segments": 0,
        "copy_lag_bytes": 0,
        "copy_lag_segments": 0,
        "not_ready": 0,
    }
    for index in ctx.broker.image.topics[name].partitions:
        tiers = ctx.broker.tiers(name, index)
        if tiers is None:
            continue
        totals["partitions"] += 1
        totals["local_size_bytes"] += tiers.local_size_bytes
        totals["remote_size_bytes"] += tiers.remote_size_bytes
        totals["remote_segments"] += tiers.remote_segments
        totals["copy_lag_bytes"] += tiers.copy_lag_bytes
        totals["copy_lag_segments"] += tiers.copy_lag_segments
        totals["not_ready"] += not tiers.ready
    return totals


def topic_summary(ctx: ConsoleContext, name: str) -> dict[str, Any]:
    topic = ctx.broker.image.topics[name]
    counts = {"under_replicated": 0, "under_min_isr": 0, "offline": 0}
    count_health(counts, topic.partitions.values(), min_isr(ctx, name))
    records, size = ctx.cached(("stored", name), STORED_MAX_AGE_S, lambda: _stored(ctx, name))
    return {
        "name": name,
        "partitions": len(topic.partitions),
        "records": records,
        "size_bytes": size,
        "under_replicated": counts["under_replicated"],
        "offline": counts["offline"],
    }


def _stored(ctx: ConsoleContext, name: str) -> tuple[int, int]:
    """Records and bytes in this broker's replicas of the topic."""
    records = size = 0
    replica = ctx.broker.replica
    for index in ctx.broker.image.topics[name].partitions:
        local = replica(name, index)
        if local is not None:
            records += local.high_watermark - local.log_start_offset
            size += local.log.size_bytes
    return records, size


def list_topics(ctx: ConsoleContext, request: Request) -> Response:
    offset, limit = page_window(request, 100, MAX_PAGE)
    needle = request.query.get("q", "").lower()
    internal = request.query.get("internal", "") in ("1", "true")
    names = sorted(
        name
        for name in ctx.broker.image.topics
        if (internal or not name.startswith("__")) and needle in name.lower()
    )
    if ctx.broker.authorizer_on:
        # What Metadata lists for the caller: the topics it may DESCRIBE.
        names = [name for name in names if ctx.topic_visible(name)]
    page = [topic_summary(ctx, name) for name in names[offset : offset + limit]]
    return json_response({"total": len(names), "offset": offset, "limit": limit, "topics": page})


def describe_topic(ctx: ConsoleContext, name: str, request: Request) -> Response:
    topic = ctx.known_topic(name)
    offset, limit = page_window(request, 100, MAX_PAGE)
    min_insync = min_isr(ctx, name)
    indexes = sorted(topic.partitions)
    counts = {"under_replicated": 0, "under_min_isr": 0, "offline": 0}
    count_health(counts, topic.partitions.values(), min_insync)
    rows = [
        partition_row(ctx, name, index, topic.partitions[index], min_insync)
        for index in indexes[offset : offset + limit]
    ]
    metrics = ctx.metrics
    return json_response(
        {
            "name": name,
            "topic_id": topic.topic_id.hex(),
            "internal": name.startswith("__"),
            "replication_factor": max(
                (len(r.replicas) for r in topic.partitions.values()), default=0
            ),
            "partition_count": len(indexes),
            "counts": counts,
            "offset": offset,
            "limit": limit,
            "partitions": rows,
            "configs": topic_configs(ctx, name),
            "tiers": ctx.cached(
                ("tiers", name), STORED_MAX_AGE_S / 5, lambda: tier_totals(ctx, name)
            ),
            "authorized_operations": ctx.authorized_operations(TOPIC, name),
            "totals": {
                "time": time.time(),
                "bytes_in": metrics.bytes_in.get(name, 0),
                "records_in": metrics.records_in.get(name, 0),
                "bytes_out": metrics.bytes_out.get(name, 0),
                "records_out": metrics.records_out.get(name, 0),
            },
        }
    )
