"""DescribeTopicPartitions (key 75): topics and their partitions, a page at a time.

Newer ``kafka-topics --describe`` and the Admin client's ``describeTopics``
ask this instead of Metadata, so a topic of 100,000 partitions is described in
pages.  Topics are taken in name order from the request's cursor (its topic
and partition); an answer stops once it holds ``response_partition_limit``
partitions (at most 2000, the default of Kafka's
``max.request.partition.size.limit``, which Samsa does not let one change
yet), and ``next_cursor``
says where the next request starts.  An empty topic list means every topic;
then topics that do not exist are left out, while a named one is answered
UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name).
A cursor whose topic is not among the named ones, or whose partition is
negative, is refused with INVALID_REQUEST, as Kafka's
DescribeTopicPartitionsRequestHandler does.

Samsa keeps no eligible leader replicas (KIP-966), so both ELR lists are empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.controller.partitions.topic_control import validate_topic_name
from samsa.errors import ErrorCode, KafkaError
from samsa.server.access.authorized_operations import TOPIC_AUTHORIZED_OPERATIONS
from samsa.server.connections.router import Body, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

API_KEY = 75
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
ZERO_ID = bytes(16)
MAX_PARTITIONS = 2000


def register(router: Router, broker: BrokerApi, listener: str) -> None:
    router.register(API_KEY, lambda ctx, req: describe(broker, listener, req))


def describe(broker: BrokerApi, listener: str, req: Body) -> Body:
    cursor = req.get("cursor")
    start_topic = cursor["topic_name"] if cursor is not None else ""
    named = [t["name"] for t in req.get("topics") or ()]
    every = not named
    image = broker.image
    if every:
        topics = sorted(name for name in image.topics if name >= start_topic)
    else:
        topics = sorted({name for name in named if name >= start_topic})
        if cursor is not None and cursor["topic_name"] not in topics:
            return _refused(
                named, f"the topic list should contain the cursor topic {cursor['topic_name']}"
            )
    if cursor is not None and cursor["partition_index"] < 0:
        return _refused(named, f"the cursor's partition must be valid: {cursor}")
    limit = max(min(MAX_PARTITIONS, req["response_partition_limit"]), 1)
    # Leaders and replicas as Kafka's KRaftMetadataCache sees them on this
    # listener: a leader without an endpoint here is -1, a replica fenced or
    # without one is offline.
    reachable = {b.id for b in image.brokers.values() if b.listener(listener) is not None}
    live = {b.id for b in image.brokers.values() if not b.fenced} & reachable
    answer: list[Body] = []
    next_cursor = None
    remaining = limit
    for name in topics:
        if remaining <= 0:
            next_cursor = {"topic_name": name, "partition_index": 0}
            break
        topic = image.topics.get(name)
        if topic is None:
            if not every:
                answer.append(_missing(name))
            continue
        first = cursor["partition_index"] if cursor is not None and name == start_topic else 0
        count = len(topic.partitions)
        upper = min(count, first + remaining)
        partitions = [
            _partition(index, topic.partitions[index], reachable, live)
            for index in range(first, upper)
            if index in topic.partitions
        ]
        answer.append(
            {
                "error_code": 0,
                "name": name,
                "topic_id": topic.topic_id,
                "is_internal": name in INTERNAL_TOPICS,
                "partitions": partitions,
                "topic_authorized_operations": TOPIC_AUTHORIZED_OPERATIONS,
            }
        )
        if upper < count:
            next_cursor = {"topic_name": name, "partition_index": upper}
            break
        remaining -= len(partitions)
    return {"throttle_time_ms": 0, "topics": answer, "next_cursor": next_cursor}


def _partition(index: int, registration: Any, reachable: set[int], live: set[int]) -> Body:
    leader = registration.leader
    return {
        "error_code": 0,
        "partition_index": index,
        "leader_id": leader if leader in reachable else -1,
        "leader_epoch": registration.leader_epoch,
        "replica_nodes": list(registration.replicas),
        "isr_nodes": list(registration.isr),
        "eligible_leader_replicas": [],
        "last_known_elr": [],
        "offline_replicas": [r for r in registration.replicas if r not in live],
    }


def _missing(name: str) -> Body:
    try:
        validate_topic_name(name)
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except (KafkaError, ValueError):
        code = ErrorCode.INVALID_TOPIC_EXCEPTION
    return {
        "error_code": code,
        "name": name,
        "topic_id": ZERO_ID,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": [],
    }


def _refused(named: list[str], why: str) -> Body:
    """Kafka's answer to a request it refuses: each named topic with the error."""
    del why  # the response has no message field; Kafka logs it
    return {
        "throttle_time_ms": 0,
        "topics": [
            {"error_code": ErrorCode.INVALID_REQUEST, "name": name, "partitions": []}
            for name in named
        ],
        "next_cursor": None,
    }
