"""Transactions through ListTransactions (66), DescribeTransactions (65) and
DescribeProducers (61), as Kafka's ``Admin.listTransactions`` & co.

A transactional id is described by its coordinator (FindCoordinator key type
1); ListTransactions asks every broker, since each knows only the ids it
coordinates; DescribeProducers asks each partition's leader and is how a
hanging transaction (an open one holding the last stable offset back) is
found.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError

__all__ = [
    "ProducerState",
    "TransactionDescription",
    "TransactionListing",
    "abort_transaction",
    "describe_producers",
    "describe_transactions",
    "list_transactions",
]

FIND_COORDINATOR = 10
WRITE_TXN_MARKERS = 27
DESCRIBE_PRODUCERS = 61
DESCRIBE_TRANSACTIONS = 65
LIST_TRANSACTIONS = 66
KEY_TYPE_TRANSACTION = 1


@dataclass(frozen=True, slots=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str
    coordinator_id: int


@dataclass(frozen=True, slots=True)
class TransactionDescription:
    transactional_id: str
    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_ms: int
    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class ProducerState:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int


def _check(code: int, what: str) -> None:
    if code:
        raise kafka_error(code, what)


def transaction_coordinator(admin: AdminPlumbing, transactional_id: str, timeout_ms: int) -> int:
    """The coordinator of ``transactional_id``, waiting while one is loading."""
    deadline = time.monotonic() + timeout_ms / 1000
    body = {
        "key": transactional_id,
        "key_type": KEY_TYPE_TRANSACTION,
        "coordinator_keys": [transactional_id],
    }
    while True:
        resp = admin._call(None, FIND_COORDINATOR, body, timeout_ms)
        entry = resp["coordinators"][0] if resp.get("coordinators") else resp
        code = ErrorCode(entry["error_code"])
        if code is ErrorCode.NONE:
            return int(entry["node_id"])
        if not code.retriable or time.monotonic() >= deadline:
            _check(code, f"FindCoordinator for transactional id {transactional_id!r}")
        time.sleep(0.05)


def list_transactions(
    admin: AdminPlumbing, states: Iterable[str], producer_ids: Iterable[int], timeout_ms: int
) -> list[TransactionListing]:
    admin._controller(timeout_ms)  # learn every broker
    body = {"state_filters": list(states), "producer_id_filters": list(producer_ids)}
    out: list[TransactionListing] = []
    for node in admin._broker_ids():
        resp = admin._call(node, LIST_TRANSACTIONS, body, timeout_ms)
        _check(resp["error_code"], f"ListTransactions on broker {node}")
        if resp["unknown_state_filters"]:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                f"unknown transaction states: {', '.join(resp['unknown_state_filters'])}",
            )
        out += [
            TransactionListing(
                t["transactional_id"], t["producer_id"], t["transaction_state"], node
            )
            for t in resp["transaction_states"]
        ]
    return out


def describe_transactions(
    admin: AdminPlumbing, transactional_ids: Iterable[str], timeout_ms: int
) -> dict[str, TransactionDescription]:
    out: dict[str, TransactionDescription] = {}
    for transactional_id in transactional_ids:
        node = transaction_coordinator(admin, transactional_id, timeout_ms)
        resp = admin._call(
            node, DESCRIBE_TRANSACTIONS, {"transactional_ids": [transactional_id]}, timeout_ms
        )
        state = resp["transaction_states"][0]
        _check(state["error_code"], f"transactional id {transactional_id!r}")
        out[transactional_id] = TransactionDescription(
            transactional_id=transactional_id,
            coordinator_id=node,
            state=state["transaction_state"],
            producer_id=state["producer_id"],
            producer_epoch=state["producer_epoch"],
            timeout_ms=state["transaction_timeout_ms"],
            start_ms=state["transaction_start_time_ms"],
            partitions=tuple(
                TopicPartition(t["topic"], p) for t in state["topics"] for p in t["partitions"]
            ),
        )
    return out


def describe_producers(
    admin: AdminPlumbing, by_leader: dict[int, list[TopicPartition]], timeout_ms: int
) -> dict[TopicPartition, list[ProducerState]]:
    out: dict[TopicPartition, list[ProducerState]] = {}
    for node, parts in by_leader.items():
        topics: dict[str, list[int]] = {}
        for tp in parts:
            topics.setdefault(tp.topic, []).append(tp.partition)
        body = {"topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]}
        resp = admin._call(node, DESCRIBE_PRODUCERS, body, timeout_ms)
        for t in resp["topics"]:
            for p in t["partitions"]:
                _check(p["error_code"], f"DescribeProducers {t['name']}-{p['partition_index']}")
                out[TopicPartition(t["name"], p["partition_index"])] = [
                    ProducerState(
                        a["producer_id"],
                        a["producer_epoch"],
                        a["last_sequence"],
                        a["last_timestamp"],
                        a["coordinator_epoch"],
                        a["current_txn_start_offset"],
                    )
                    for a in p["active_producers"]
                ]
    return out


def abort_transaction(
    admin: AdminPlumbing,
    leader: int,
    partition: TopicPartition,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timeout_ms: int,
) -> None:
    """Write an ABORT marker for a hanging transaction straight to the partition's
    leader (Kafka's ``Admin.abortTransaction``): the last stable offset moves on."""
    body = {
        "markers": [
            {
                "producer_id": producer_id,
                "producer_epoch": producer_epoch,
                "transaction_result": False,
                "topics": [{"name": partition.topic, "partition_indexes": [partition.partition]}],
                "coordinator_epoch": coordinator_epoch,
            }
        ]
    }
    resp = admin._call(leader, WRITE_TXN_MARKERS, body, timeout_ms)
    for marker in resp["markers"]:
        for topic in marker["topics"]:
            for p in topic["partitions"]:
                _check(
                    p["error_code"],
                    f"aborting producer {producer_id}'s transaction on "
                    f"{topic['name']}-{p['partition_index']}",
                )
