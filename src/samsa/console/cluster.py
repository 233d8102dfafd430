"""The cluster page: brokers and their state, the metadata quorum, partition
health counts, and the log cleaner and request metrics the broker exports.
With ACLs on, the page needs DESCRIBE on the cluster (as DescribeQuorum
does); the header every page shows (``/api/brokers``: the cluster, the
brokers, as Metadata tells any client) counts only the partitions of topics
the caller may DESCRIBE.

Brokers and partitions come from the metadata image, so every broker's
console tells the same story: a broker whose session expired is ``fenced``
and the partitions it held drop out of their ISRs.  The quorum is asked with
DescribeQuorum through the broker's handler (forwarded to the active
controller, as for any client), with a short bound so a lost controller
shows as "unavailable" instead of stalling the page.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from samsa.console.context import CLUSTER, CLUSTER_NAME, ConsoleContext
from samsa.console.topics import count_health, min_isr
from samsa.errors import KafkaError
from samsa.http.messages import Request, Response, json_response
from samsa.protocol.acl import AclOperation
from samsa.protocol.messages import APIS

if TYPE_CHECKING:
    from samsa.controller.image.metadata_image import TopicImage

DESCRIBE_QUORUM = 55
QUORUM_WAIT_S = 1.0


def broker_state(fenced: bool, shutting_down: bool) -> str:
    if shutting_down:
        return "shutting_down"
    return "fenced" if fenced else "active"


@functools.cache
def samsa_version() -> str:
    """The installed version, looked up once: reading the package metadata took
    a tenth of the broker's CPU for a polling console page (every header refresh)."""
    try:
        return importlib.metadata.version("samsa")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def summary(ctx: ConsoleContext) -> dict[str, Any]:
    """What every page's header shows: the cluster, this node, the brokers."""
    b = ctx.broker
    image = b.image
    topics: Iterable[TopicImage] = image.topics.values()
    if b.authorizer_on:
        topics = [t for name, t in image.topics.items() if ctx.topic_visible(name)]
    led = Counter(r.leader for topic in topics for r in topic.partitions.values())
    brokers = []
    for node in sorted(image.brokers.values(), key=lambda r: r.id):
        endpoint = node.listeners[0] if node.listeners else None
        brokers.append(
            {
                "node_id": node.id,
                "host": endpoint.host if endpoint else "",
                "port": endpoint.port if endpoint else -1,
                "rack": node.rack,
                "fenced": node.fenced,
                "state": broker_state(node.fenced, node.in_controlled_shutdown),
                "partitions_led": led.get(node.id, 0),
            }
        )
    leader = b.quorum_leader()
    return {
        "cluster_id": b.cluster_id,
        "node_id": b.node_id,
        "controller_id": -1 if leader is None else leader,
        "version": samsa_version(),
        "uptime_s": round(time.time() - ctx.metrics.started),
        "actions_enabled": ctx.allow_actions,
        "brokers": brokers,
        # What DescribeCluster's authorized operations tell this user: the
        # pages grey out the cluster-wide actions it would be refused.
        "cluster_authorized_operations": ctx.authorized_operations(CLUSTER, CLUSTER_NAME),
    }


def brokers(ctx: ConsoleContext, _: Request) -> Response:
    return json_response(summary(ctx))


async def cluster(ctx: ConsoleContext, _: Request) -> Response:
    # The quorum, request statistics and cluster-wide counts: what
    # DescribeQuorum and DescribeConfigs(BROKER) need, DESCRIBE on the cluster.
    ctx.require(AclOperation.DESCRIBE, CLUSTER, CLUSTER_NAME)
    counts = {"partitions": 0, "under_replicated": 0, "under_min_isr": 0, "offline": 0}
    for name, topic in ctx.broker.image.topics.items():
        counts["partitions"] += len(topic.partitions)
        count_health(counts, topic.partitions.values(), min_isr(ctx, name))
    return json_response(
        {
            **summary(ctx),
            "partitions": counts,
            "quorum": await quorum(ctx),
            "cleaner": cleaner(ctx),
            "requests": requests(ctx),
            "isr": {"shrinks": ctx.metrics.isr_shrinks, "expands": ctx.metrics.isr_expands},
        }
    )


async def quorum(ctx: ConsoleContext) -> dict[str, Any]:
    body = {
        "topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
    }
    try:
        answer = await asyncio.wait_for(ctx.kafka(DESCRIBE_QUORUM, 1, body), QUORUM_WAIT_S)
    except (TimeoutError, KafkaError) as exc:
        return {"available": False, "error": str(exc) or "the controller did not answer in time"}
    if answer.get("error_code") or not answer.get("topics"):
        message = answer.get("error_message") or f"error code {answer.get('error_code')}"
        return {"available": False, "error": message}
    p = answer["topics"][0]["partitions"][0]
    if p["error_code"]:
        return {"available": False, "error": f"error code {p['error_code']}"}
    hw = p["high_watermark"]

    def replicas(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "node_id": s["replica_id"],
                "log_end_offset": s["log_end_offset"],
                "lag": max(hw - s["log_end_offset"], 0),
                "last_caught_up_timestamp": s.get("last_caught_up_timestamp", -1),
            }
            for s in states
        ]

    return {
        "available": True,
        "leader": p["leader_id"],
        "leader_epoch": p["leader_epoch"],
        "high_watermark": hw,
        "voters": replicas(p["current_voters"]),
        "observers": replicas(p["observers"]),
    }


def cleaner(ctx: ConsoleContext) -> dict[str, Any] | None:
    stats = ctx.view.cleaner_stats()
    if stats is None:
        return None
    return {
        "passes": stats.passes,
        "logs_cleaned": stats.logs_cleaned,
        "bytes_reclaimed": stats.bytes_reclaimed,
        "uncleanable": dict(stats.uncleanable),
    }


def requests(ctx: ConsoleContext) -> list[dict[str, Any]]:
    """Requests per API and version since start, as ``samsa_requests_total`` and
    the latency histogram export them."""
    rows = []
    for (api_key, version), stats in sorted(ctx.metrics.requests.items()):
        schema = APIS.get(api_key)
        rows.append(
            {
                "api": schema.name if schema else str(api_key),
                "version": version,
                "count": stats.count,
                "errors": stats.errors,
                "mean_ms": round(1000 * stats.seconds / stats.count, 3) if stats.count else 0.0,
            }
        )
    return rows
