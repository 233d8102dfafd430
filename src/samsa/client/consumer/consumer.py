"""Consumer: the application-facing facade (Kafka's KafkaConsumer).

Wires the pieces together and owns the ``poll`` loop:

* ``SubscriptionState`` -- what is assigned and where each partition stands;
* ``Fetcher`` -- pipelined Fetch requests and decoded record buffers;
* ``OffsetFetcher`` -- ListOffsets for resets and offset queries;
* ``ConsumerCoordinator`` -- group membership and offsets (only with group.id),
  over a NetworkClient of its own so heartbeats never queue behind fetches.

Threading: like Kafka's consumer this object is not thread-safe; one
application thread calls its methods.  The only other thread is the group
heartbeat thread, which touches nothing here.  Timeouts are in seconds
(Python's convention); internally everything is integer milliseconds.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from samsa.client.consumer.config import parse_consumer_config
from samsa.client.consumer.errors import ConsumerClosedError
from samsa.client.consumer.fetch.fetcher import Fetcher
from samsa.client.consumer.fetch.offsets import EARLIEST, LATEST, OffsetFetcher
from samsa.client.consumer.membership.consumer_protocol import ConsumerProtocolCoordinator
from samsa.client.consumer.membership.coordinator import (
    CommitCallback,
    ConsumerCoordinator,
    RebalanceCallback,
)
from samsa.client.consumer.network import ConsumerNetworkClient, monotonic_ms
from samsa.client.consumer.records import (
    ConsumerGroupMetadata,
    ConsumerRecord,
    OffsetAndMetadata,
    OffsetAndTimestamp,
)
from samsa.client.consumer.subscription import SubscriptionState
from samsa.client.errors import KafkaTimeoutError
from samsa.client.metadata import Metadata, TopicPartition
from samsa.client.network.network_client import NetworkClient
from samsa.client.network.security import ClientSecurity
from samsa.errors import ErrorCode, KafkaError, SamsaError

__all__ = ["Consumer"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")


def build_network_client(cfg: dict[str, Any], request_timeout_ms: int) -> ConsumerNetworkClient:
    """A NetworkClient with its own Metadata, configured from consumer/admin keys."""
    metadata = Metadata(
        cfg["bootstrap.servers"], cfg["metadata.max.age.ms"], cfg["retry.backoff.ms"]
    )
    net = NetworkClient(
        metadata,
        client_id=cfg["client.id"],
        max_in_flight=5,
        request_timeout_ms=request_timeout_ms,
        reconnect_backoff_ms=cfg["reconnect.backoff.ms"],
        reconnect_backoff_max_ms=cfg["reconnect.backoff.max.ms"],
        connections_max_idle_ms=cfg["connections.max.idle.ms"],
        connection_setup_timeout_ms=cfg["socket.connection.setup.timeout.ms"],
        send_buffer_bytes=cfg["send.buffer.bytes"],
        receive_buffer_bytes=cfg["receive.buffer.bytes"],
        keepalive=cfg["socket.keepalive.enable"],
        nodelay=cfg["socket.nagle.disable"],
        security=ClientSecurity.from_config(cfg),
    )
    return ConsumerNetworkClient(net, request_timeout_ms)


def _partitions(items: Iterable[Any]) -> list[TopicPartition]:
    return [TopicPartition(*tp) for tp in items]


class Consumer:
    """Reads records from assigned or group-subscribed partitions.

    ``config`` uses Kafka's key names (``bootstrap.servers``, ``group.id``,
    ``auto.offset.reset`` ...); unknown keys or bad values raise ConfigError.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        cfg = parse_consumer_config(config)
        self._cfg = cfg
        self._max_poll_records: int = cfg["max.poll.records"]
        self._request_timeout_ms: int = cfg["request.timeout.ms"]
        self._client = build_network_client(cfg, cfg["request.timeout.ms"])
        self._metadata = self._client.metadata
        self._subs = SubscriptionState(cfg["auto.offset.reset"])
        self._fetcher = Fetcher(self._client, self._subs, cfg)
        isolation = 1 if cfg["isolation.level"] == "read_committed" else 0
        self._offsets = OffsetFetcher(self._client, self._subs, isolation)
        self._coordinator: ConsumerCoordinator | None = None
        if cfg["group.id"] is not None:
            # JoinGroup may be parked for the whole rebalance timeout, so the
            # group connection's request timeout must outlast it.
            group_timeout = max(cfg["request.timeout.ms"], cfg["max.poll.interval.ms"] + 5000)
            coordinator_class = (
                ConsumerProtocolCoordinator
                if cfg["group.protocol"] == "consumer"
                else ConsumerCoordinator
            )
            self._coordinator = coordinator_class(
                build_network_client(cfg, group_timeout), self._subs, cfg, self
            )
        self._closed = False

    # -- subscription --------------------------------------------------------------
    def subscribe(
        self,
        topics: Iterable[str] | str | re.Pattern[str],
        on_assign: RebalanceCallback | None = None,
        on_revoke: RebalanceCallback | None = None,
        on_lost: RebalanceCallback | None = None,
    ) -> None:
        """Join the group for ``topics`` (names, or a regex / a name starting with ``^``).

        Callbacks are called as ``cb(consumer, partitions)`` from inside ``poll``.
        """
        self._check_open()
        coordinator = self._require_group("subscribe()")
        if isinstance(topics, re.Pattern) or (isinstance(topics, str) and topics.startswith("^")):
            self._subs.subscribe_pattern(re.compile(topics))
            coordinator.request_rejoin("pattern subscription")
        else:
            names = [topics] if isinstance(topics, str) else list(topics)
            if self._subs.subscribe(names):
                coordinator.request_rejoin("subscription changed")
            for topic in names:
                self._metadata.add_topic(topic)
        coordinator.on_assign, coordinator.on_revoke = on_assign, on_revoke
        coordinator.on_lost = on_lost

    def assign(self, partitions: Iterable[Any]) -> None:
        """Read exactly these partitions, outside any group rebalancing."""
        self._check_open()
        parts = _partitions(partitions)
        self._subs.assign_from_user(parts)
        for tp in parts:
            self._metadata.add_topic(tp.topic)

    def assignment(self) -> set[TopicPartition]:
        return set(self._subs.assignment)

    def subscription(self) -> set[str]:
        return set(self._subs.subscription)

    def unsubscribe(self) -> None:
        self._check_open()
        if self._coordinator is not None:
            self._coordinator.unsubscribe()
        self._subs.unsubscribe()

    # -- polling ---------------------------------------------------------------------
    def poll(self, timeout: float = 0.0, max_records: int | None = None) -> list[ConsumerRecord]:
        """Records fetched since the last call, waiting up to ``timeout`` seconds for some."""
        limit = max_records or self._max_poll_records
        fetcher = self._fetcher
        return self._poll_until(timeout, lambda: fetcher.fetched_records(limit))

    def poll_arrow(
        self,
        timeout: float = 0.0,
        max_records: int | None = None,
        include_headers: bool = False,
        *,
        spark: bool = False,
    ) -> Any:
        """Like :meth:`poll`, as one ``pyarrow.RecordBatch`` (needs ``samsa[arrow]``).

        Positions advance past the returned records and ``commit()`` commits
        them, as with ``poll()``.  ``max_records`` None means every record
        already fetched (not ``max.poll.records``: columns pay off in large
        batches).  The batch may be empty; it always has
        ``arrow_schema(include_headers, spark)``.  Keys and values are the raw
        bytes: ``key.deserializer``/``value.deserializer`` apply to ``poll()`` only.
        """
        from samsa.client.consumer.arrow.poll import ArrowTaker

        taker = ArrowTaker(self._fetcher, max_records, include_headers, spark, self._cfg)
        return taker.combine(self._poll_until(timeout, taker.take))

    def _poll_until(self, timeout: float, take: Callable[[], list[_T]]) -> list[_T]:
        """The poll loop: group duties, positions, fetches, until ``take`` hands something out."""
        self._check_open()
        if not self._subs.subscription and not self._subs.assignment and self._subs.pattern is None:
            raise SamsaError("poll() needs subscribe() or assign() first")
        fetcher, client = self._fetcher, self._client
        deadline = monotonic_ms() + int(timeout * 1000)
        while True:
            if self._coordinator is not None and not self._coordinator.poll(deadline):
                return []
            self._update_positions(deadline)
            records = take()
            if records:
                self._transmit_fetches()
                return records
            fetcher.send_fetches()
            now = monotonic_ms()
            left = deadline - now
            if left <= 0:
                client.poll(0)
                return take()
            wait = left
            if self._coordinator is not None:
                wait = min(wait, max(1, self._coordinator.time_to_next_auto_commit_ms(now)))
            client.poll(wait)
            records = take()
            if records:
                self._transmit_fetches()
                return records

    def _transmit_fetches(self) -> None:
        """Get the next fetches on the wire before handing records back.

        Only when there is something to send, as Kafka's consumer does: a poll
        served from buffered records then costs no system call, and a poll
        that returns 500 of a fetch's thousands of records is the common one.
        """
        if self._fetcher.send_fetches() or self._client.has_unsent():
            self._client.poll(0)

    def _update_positions(self, deadline_ms: int) -> None:
        missing = self._subs.missing_positions()
        if missing:
            if self._coordinator is not None:
                try:
                    committed = self._coordinator.fetch_committed(
                        missing, max(1, min(self._request_timeout_ms, deadline_ms - monotonic_ms()))
                    )
                except KafkaTimeoutError:
                    committed = {}
                    return
                for tp, om in committed.items():
                    if om is not None:
                        self._subs.seek(tp, om.offset, om.leader_epoch)
                    else:
                        self._subs.request_reset(tp)
            else:
                for tp in missing:
                    self._subs.request_reset(tp)
        if self._subs.awaiting_reset():
            self._offsets.reset_positions()

    def group_metadata(self) -> ConsumerGroupMetadata:
        """The group and this member's generation, for ``send_offsets_to_transaction``."""
        coordinator = self._coordinator
        if coordinator is None:
            raise KafkaError(ErrorCode.INVALID_GROUP_ID, "the consumer has no group.id")
        return ConsumerGroupMetadata(
            coordinator.group_id,
            coordinator.generation_id,
            coordinator.member_id,
            coordinator.group_instance_id,
        )

    # -- offsets -----------------------------------------------------------------------
    def commit(
        self,
        offsets: Mapping[Any, OffsetAndMetadata | int] | None = None,
        asynchronous: bool = False,
        callback: CommitCallback | None = None,
        timeout: float | None = None,
    ) -> None:
        """Commit ``offsets`` (default: the current positions) for the group."""
        self._check_open()
        coordinator = self._require_group("commit()")
        to_commit = dict(offsets) if offsets is not None else self._subs.all_consumed()
        if asynchronous:
            coordinator.commit_async(to_commit, callback)
        else:
            coordinator.commit_sync(to_commit, self._timeout_ms(timeout))

    def committed(
        self, partitions: Iterable[Any], timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        self._check_open()
        coordinator = self._require_group("committed()")
        return coordinator.fetch_committed(_partitions(partitions), self._timeout_ms(timeout))

    def seek(self, partition: Any, offset: int) -> None:
        self._check_open()
        if offset < 0:
            raise SamsaError(f"seek offset must be >= 0, got {offset}")
        self._subs.seek(TopicPartition(*partition), offset)

    def seek_to_beginning(self, partitions: Iterable[Any] | None = None) -> None:
        self._check_open()
        for tp in (
            _partitions(partitions) if partitions is not None else list(self._subs.assignment)
        ):
            self._subs.request_reset(tp, "earliest")

    def seek_to_end(self, partitions: Iterable[Any] | None = None) -> None:
        self._check_open()
        for tp in (
            _partitions(partitions) if partitions is not None else list(self._subs.assignment)
        ):
            self._subs.request_reset(tp, "latest")

    def position(self, partition: Any, timeout: float | None = None) -> int:
        """Offset of the next record to be returned, resolving a pending reset first."""
        self._check_open()
        tp = TopicPartition(*partition)
        st = self._subs.state(tp)
        deadline = monotonic_ms() + self._timeout_ms(timeout)
        while st.position is None:
            if monotonic_ms() >= deadline:
                raise KafkaTimeoutError(f"position of {tp.topic}-{tp.partition} not known in time")
            self._update_positions(deadline)
            self._client.poll(min(50, max(0, deadline - monotonic_ms())))
        return st.position

    def pause(self, partitions: Iterable[Any]) -> None:
        self._subs.pause(_partitions(partitions))

    def resume(self, partitions: Iterable[Any]) -> None:
        self._subs.resume(_partitions(partitions))

    def paused(self) -> set[TopicPartition]:
        return self._subs.paused()

    def offsets_for_times(
        self, timestamps: Mapping[Any, int], timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """First offset whose timestamp is >= the given one (ms), per partition; None if none."""
        self._check_open()
        found = self._offsets.offsets_by_times(
            {TopicPartition(*tp): ts for tp, ts in timestamps.items()}, self._timeout_ms(timeout)
        )
        return {
            tp: None if v is None else OffsetAndTimestamp(v[0], v[1], v[2])
            for tp, v in found.items()
        }

    def beginning_offsets(
        self, partitions: Iterable[Any], timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        return self._edge_offsets(partitions, EARLIEST, timeout)

    def end_offsets(
        self, partitions: Iterable[Any], timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """High watermark (read_uncommitted) or last stable offset (read_committed)."""
        return self._edge_offsets(partitions, LATEST, timeout)

    def _edge_offsets(
        self, partitions: Iterable[Any], which: int, timeout: float | None
    ) -> dict[TopicPartition, int]:
        self._check_open()
        found = self._offsets.offsets_by_times(
            dict.fromkeys(_partitions(partitions), which), self._timeout_ms(timeout)
        )
        return {tp: -1 if v is None else v[0] for tp, v in found.items()}

    def list_topics(self, timeout: float | None = None) -> dict[str, int]:
        """Partition count of every topic in the cluster."""
        self._check_open()
        coordinator = self._coordinator
        if coordinator is None:
            raise SamsaError("list_topics() needs group.id in this version")
        return coordinator.topic_partition_counts(None, monotonic_ms() + self._timeout_ms(timeout))

    # -- lifecycle ------------------------------------------------------------------------
    def close(self, timeout: float | None = None) -> None:
        """Commit (auto-commit on), leave the group, close every connection."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._coordinator is not None:
                self._coordinator.close_group(self._timeout_ms(timeout))
            self._close_fetch_sessions(self._timeout_ms(timeout))
        finally:
            if self._coordinator is not None:
                self._coordinator.client.close()
            self._client.close()

    def _close_fetch_sessions(self, timeout_ms: int) -> None:
        """Free our fetch sessions' slots on the brokers (FINAL_EPOCH), as Kafka's
        consumer does on close; the brokers answer those at once."""
        finals = self._fetcher.close_sessions()
        deadline = monotonic_ms() + timeout_ms
        while any(not f.done for f in finals) and monotonic_ms() < deadline:
            self._client.poll(max(1, deadline - monotonic_ms()))

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ------------------------------------------------------------------------------
    def _timeout_ms(self, timeout: float | None) -> int:
        return self._request_timeout_ms if timeout is None else int(timeout * 1000)

    def _require_group(self, what: str) -> ConsumerCoordinator:
        if self._coordinator is None:
            raise SamsaError(f"{what} requires group.id")
        return self._coordinator

    def _check_open(self) -> None:
        if self._closed:
            raise ConsumerClosedError("the consumer is closed")
