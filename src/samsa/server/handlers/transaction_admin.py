"""DescribeTransactions (65), ListTransactions (66), DescribeProducers (61): what
``kafka-transactions.sh`` (and ``samsa transactions``) shows.

Describe and List answer from this broker's transaction coordinator, for the
transactional ids it coordinates (an admin client asks each coordinator, or
every broker for List); they never create ``__transaction_state``.
DescribeProducers answers from a partition leader's producer state, which
shows a hanging transaction: a producer whose ``current_txn_start_offset``
holds the last stable offset back.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.coordinators.txn_wiring import TRANSACTION_TOPIC

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE_PRODUCERS = 61
DESCRIBE_TRANSACTIONS = 65
LIST_TRANSACTIONS = 66


def register(router: Router, broker: BrokerApi) -> None:
    router.register(DESCRIBE_PRODUCERS, lambda ctx, req: describe_producers(broker, ctx, req))
    router.register(DESCRIBE_TRANSACTIONS, lambda ctx, req: describe_transactions(broker, ctx, req))
    router.register(LIST_TRANSACTIONS, lambda ctx, req: list_transactions(broker, ctx, req))


def _coordinator(broker: BrokerApi) -> tuple[Any, ErrorCode | None]:
    """The coordinator if this broker runs one; loading it when its topic exists."""
    if broker.transactions is not None:
        return broker.transactions, None
    if TRANSACTION_TOPIC in broker.image.topics:
        return None, broker.ensure_transaction_coordinator()
    return None, None


def describe_transactions(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    coordinator, error = _coordinator(broker)
    states = []
    for transactional_id in req["transactional_ids"]:
        entry: dict[str, Any] = {
            "error_code": ErrorCode.NONE,
            "transactional_id": transactional_id,
            "transaction_state": "",
            "transaction_timeout_ms": 0,
            "transaction_start_time_ms": -1,
            "producer_id": -1,
            "producer_epoch": -1,
            "topics": [],
        }
        code = error
        if coordinator is None:
            code = code or ErrorCode.NOT_COORDINATOR
        else:
            code = coordinator.coordinator_error(transactional_id)
        meta = None if code is not None else coordinator.get(transactional_id)
        if code is None and meta is None:
            code = ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        if code is not None or meta is None:
            entry["error_code"] = code
        else:
            by_topic: dict[str, list[int]] = {}
            for topic, index in sorted(meta.partitions):
                by_topic.setdefault(topic, []).append(index)
            entry.update(
                transaction_state=meta.state.kafka_name,
                transaction_timeout_ms=meta.timeout_ms,
                transaction_start_time_ms=meta.start_ms,
                producer_id=meta.producer_id,
                producer_epoch=meta.producer_epoch,
                topics=[{"topic": t, "partitions": ids} for t, ids in by_topic.items()],
            )
        states.append(entry)
    return {"throttle_time_ms": 0, "transaction_states": states}


def list_transactions(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    from samsa.transaction import TxnState

    coordinator, error = _coordinator(broker)
    wanted_states = set()
    unknown = []
    for name in req.get("state_filters") or ():
        state = TxnState.from_name(name)
        if state is None:
            unknown.append(name)
        else:
            wanted_states.add(state)
    wanted_ids = set(req.get("producer_id_filters") or ())
    # v1: only transactions running longer than this (KIP-994); v2: only ids the
    # pattern matches whole (KIP-1152), as Kafka's re2j ``matches``.
    older_than = req.get("duration_filter", -1)
    pattern_text = req.get("transactional_id_pattern") or ""
    try:
        pattern = re.compile(pattern_text) if pattern_text else None
    except re.error:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.INVALID_REGULAR_EXPRESSION,
            "unknown_state_filters": [],
            "transaction_states": [],
        }
    now = time.time_ns() // 1_000_000
    found = []
    if coordinator is not None:
        for meta in coordinator.transactions():
            if meta.state is TxnState.DEAD:
                continue
            if wanted_states and meta.state not in wanted_states:
                continue
            if wanted_ids and meta.producer_id not in wanted_ids:
                continue
            if older_than >= 0 and now - meta.start_ms <= older_than:
                continue
            if pattern is not None and not pattern.fullmatch(meta.transactional_id):
                continue
            found.append(
                {
                    "transactional_id": meta.transactional_id,
                    "producer_id": meta.producer_id,
                    "transaction_state": meta.state.kafka_name,
                }
            )
    return {
        "throttle_time_ms": 0,
        "error_code": error or ErrorCode.NONE,
        "unknown_state_filters": unknown,
        "transaction_states": found,
    }


def describe_producers(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    topics = []
    for topic in req["topics"]:
        parts = []
        for index in topic["partition_indexes"]:
            entry: dict[str, Any] = {
                "partition_index": index,
                "error_code": ErrorCode.NONE,
                "error_message": None,
                "active_producers": [],
            }
            try:
                partition = broker.replicas.leader_partition(topic["name"], index)
            except KafkaError as exc:
                entry.update(error_code=exc.code, error_message=str(exc))
                parts.append(entry)
                continue
            for producer in partition.producer_state.active_producers().values():
                first = producer.current_txn_first_offset
                entry["active_producers"].append(
                    {
                        "producer_id": producer.producer_id,
                        "producer_epoch": producer.producer_epoch,
                        "last_sequence": producer.last_seq,
                        "last_timestamp": producer.last_timestamp,
                        "coordinator_epoch": producer.coordinator_epoch,
                        "current_txn_start_offset": -1 if first is None else first,
                    }
                )
            parts.append(entry)
        topics.append({"name": topic["name"], "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
