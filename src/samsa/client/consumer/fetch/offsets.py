"""ListOffsets lookups: position resets and offset queries (Kafka's OffsetFetcher).

``reset_positions`` runs inside ``poll``: partitions waiting for
``auto.offset.reset`` get one ListOffsets per leader (timestamp -2 earliest,
-1 latest), answered asynchronously; a reset that was overtaken by a seek is
ignored.  ``offsets_by_times`` is the blocking form behind
``beginning_offsets``, ``end_offsets`` and ``offsets_for_times``, retrying
retriable errors (leader moved, metadata not there yet) until its deadline.

Owned by the application thread.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from samsa.client.consumer.errors import kafka_error
from samsa.client.consumer.network import ConsumerNetworkClient, RequestFuture
from samsa.client.consumer.subscription import SubscriptionState
from samsa.client.errors import KafkaTimeoutError
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError

__all__ = ["EARLIEST", "LATEST", "OffsetFetcher", "list_offsets_request"]

log = logging.getLogger(__name__)

LIST_OFFSETS = 2
EARLIEST = -2
LATEST = -1
_STRATEGY_TIMESTAMP = {"earliest": EARLIEST, "latest": LATEST}


def list_offsets_request(
    timestamps: Mapping[TopicPartition, int], isolation_level: int
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, ts in timestamps.items():
        topics.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "current_leader_epoch": -1, "timestamp": ts}
        )
    return {
        "replica_id": -1,
        "isolation_level": isolation_level,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
    }


def parse_list_offsets(
    body: dict[str, Any],
) -> tuple[dict[TopicPartition, tuple[int, int, int | None]], dict[TopicPartition, int]]:
    """({tp: (offset, timestamp, leader_epoch)}, {tp: error code}) of a ListOffsets reply."""
    found: dict[TopicPartition, tuple[int, int, int | None]] = {}
    errors: dict[TopicPartition, int] = {}
    for t in body["topics"]:
        for p in t["partitions"]:
            tp = TopicPartition(t["name"], p["partition_index"])
            if p["error_code"]:
                errors[tp] = p["error_code"]
            else:
                epoch = p.get("leader_epoch", -1)
                found[tp] = (p["offset"], p["timestamp"], epoch if epoch >= 0 else None)
    return found, errors


class OffsetFetcher:
    def __init__(
        self,
        client: ConsumerNetworkClient,
        subscriptions: SubscriptionState,
        isolation_level: int,
    ) -> None:
        self._client = client
        self._subs = subscriptions
        self._isolation = isolation_level
        self._resetting: set[TopicPartition] = set()

    # -- asynchronous resets -------------------------------------------------------
    def reset_positions(self) -> None:
        leaders = self._client.metadata.cluster.leaders
        by_node: dict[int, dict[TopicPartition, tuple[int, int]]] = {}
        for tp in self._subs.awaiting_reset():
            if tp in self._resetting:
                continue
            st = self._subs.assignment[tp]
            strategy = st.reset_strategy
            assert strategy is not None
            if strategy == "none":
                raise KafkaError(
                    ErrorCode.OFFSET_OUT_OF_RANGE,
                    f"no committed offset for {tp.topic}-{tp.partition} "
                    "and auto.offset.reset is none",
                )
            leader = leaders.get(tp)
            if leader is None:
                self._client.metadata.add_topic(tp.topic)
                self._client.metadata.request_update()
                continue
            by_node.setdefault(leader, {})[tp] = (_STRATEGY_TIMESTAMP[strategy], st.epoch)
        for node_id, wanted in by_node.items():
            body = list_offsets_request({tp: ts for tp, (ts, _) in wanted.items()}, self._isolation)
            self._resetting.update(wanted)
            future = self._client.send(node_id, LIST_OFFSETS, body)
            future.add_callback(partial(self._on_reset, wanted))

    def _on_reset(
        self, wanted: dict[TopicPartition, tuple[int, int]], future: RequestFuture
    ) -> None:
        self._resetting.difference_update(wanted)
        if future.failed:
            log.debug("ListOffsets for reset failed: %s", future.exception)
            self._client.metadata.request_update()
            return
        found, errors = parse_list_offsets(future.value)
        for tp, (offset, _ts, leader_epoch) in found.items():
            st = self._subs.assignment.get(tp)
            if st is None or tp not in wanted or st.epoch != wanted[tp][1]:
                continue  # unassigned or seeked meanwhile
            if st.reset_strategy is None:
                continue
            log.info("[%s-%d] reset position to offset %d", tp.topic, tp.partition, offset)
            self._subs.seek(tp, offset, leader_epoch)
        if errors:
            log.debug("ListOffsets errors %s; refreshing metadata", errors)
            self._client.metadata.request_update()

    # -- blocking queries ----------------------------------------------------------
    def offsets_by_times(
        self, timestamps: Mapping[TopicPartition, int], timeout_ms: int
    ) -> dict[TopicPartition, tuple[int, int, int | None] | None]:
        """Offset for each partition's timestamp (-2 earliest, -1 latest), or None if none.

        Raises KafkaTimeoutError past ``timeout_ms``, KafkaError for a
        non-retriable partition error.
        """
        client = self._client
        deadline = client.now_ms() + timeout_ms
        remaining = {TopicPartition(*tp): ts for tp, ts in timestamps.items()}
        result: dict[TopicPartition, tuple[int, int, int | None] | None] = {}
        for tp in remaining:
            client.metadata.add_topic(tp.topic)
        while remaining:
            if client.now_ms() >= deadline:
                raise KafkaTimeoutError(
                    f"offsets of {sorted(remaining)} not found in {timeout_ms} ms"
                )
            leaders = client.metadata.cluster.leaders
            by_node: dict[int, dict[TopicPartition, int]] = {}
            for tp, ts in remaining.items():
                leader = leaders.get(tp)
                if leader is not None:
                    by_node.setdefault(leader, {})[tp] = ts
            if not by_node:
                client.metadata.request_update()
                client.poll(min(50, max(0, deadline - client.now_ms())))
                continue
            futures = [
                client.send(node, LIST_OFFSETS, list_offsets_request(w, self._isolation))
                for node, w in by_node.items()
            ]
            retry = False
            for future in futures:
                try:
                    body = client.wait(future, max(0, deadline - client.now_ms()))
                except KafkaTimeoutError:
                    raise
                except KafkaError as exc:
                    log.debug("ListOffsets failed: %s; retrying", exc)
                    retry = True
                    continue
                found, errors = parse_list_offsets(body)
                for tp, value in found.items():
                    if tp in remaining:
                        del remaining[tp]
                        result[tp] = None if value[0] < 0 else value
                for tp, code in errors.items():
                    err = kafka_error(code, f"ListOffsets for {tp.topic}-{tp.partition}")
                    if not err.retriable:
                        raise err
                    retry = True
            if retry:
                client.metadata.request_update()
                client.poll(min(50, max(0, deadline - client.now_ms())))
        return result
