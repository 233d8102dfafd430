"""Fetch pipeline: Fetch requests ahead of ``poll()``, decoded in bulk (Kafka's Fetcher).

Two offsets per partition matter here.  The *position* (SubscriptionState) is
the next record ``poll()`` hands out; the *fetch offset* (kept here) is the next
record to ask the broker for.  When a response arrives only its batch headers
are read (``PartitionRecords``): the fetch offset moves past them and the next
Fetch to that broker is sent straight away, before any record is decoded -- so
the network and the broker work while ``poll()`` decodes batch by batch.
Memory is bounded by sending for a partition only while it has at most one
undrained response buffered, and by one Fetch in flight per broker.

Seeks and resets bump the partition's ``epoch``; buffered data and responses
tagged with an older epoch are dropped, so nothing fetched before a seek leaks
out after it.

Requests go through a fetch session per broker (``FetchRequests``, KIP-227):
after the first, they name only what changed, and the answers only the
partitions with news; a partition of the session missing from an
incremental answer has no records at its offset.

read_committed: the broker returns data up to the last stable offset plus the
list of aborted transactions in that range, which ``PartitionRecords`` uses to
drop aborted batches.  A decoding error (CRC, malformed record) is raised from
``poll`` once the records before it have been handed out; the partition's
buffer is dropped and the next fetch starts again at the position.

Owned by the application thread; callbacks run inside its ``poll``.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

from samsa.client.consumer.errors import OffsetOutOfRangeError, kafka_error
from samsa.client.consumer.fetch.decoder import PartitionRecords
from samsa.client.consumer.fetch.requests import READ_COMMITTED, FetchRequests
from samsa.client.consumer.network import ConsumerNetworkClient, RequestFuture
from samsa.client.consumer.records import ConsumerRecord
from samsa.client.consumer.subscription import SubscriptionState
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, SamsaError

__all__ = ["Fetcher"]

log = logging.getLogger(__name__)

FETCH = 1

FetchPart = tuple[TopicPartition, int, int]
"""A partition to fetch: (partition, its seek epoch, the fetch offset)."""

# Errors that mean "our view of the cluster is stale": refresh metadata, retry.
_REFRESH_METADATA = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.KAFKA_STORAGE_ERROR,
        ErrorCode.REPLICA_NOT_AVAILABLE,
        ErrorCode.OFFSET_NOT_AVAILABLE,
    }
)


class Fetcher:
    def __init__(
        self,
        client: ConsumerNetworkClient,
        subscriptions: SubscriptionState,
        cfg: dict[str, Any],
    ) -> None:
        self._client = client
        self._subs = subscriptions
        self._requests = FetchRequests(cfg)
        self._isolation = READ_COMMITTED if cfg["isolation.level"] == "read_committed" else 0
        self._check_crcs: bool = cfg["check.crcs"]
        self._key_deserializer: Callable[[bytes | None], Any] | None = cfg["key.deserializer"]
        self._value_deserializer: Callable[[bytes | None], Any] | None = cfg["value.deserializer"]
        self._buffers: dict[TopicPartition, deque[PartitionRecords]] = {}
        # tp -> (epoch, next offset to fetch); valid only while the epoch matches.
        self._fetch_offsets: dict[TopicPartition, tuple[int, int]] = {}
        self._nodes_in_flight: set[int] = set()
        self._closed = False
        self._errors: list[SamsaError] = []
        # tp -> (buffered fetch, position, its records from there as an Arrow batch), kept
        # between poll_arrow() calls that take a fetch's records in several slices.
        self._arrow_rest: dict[TopicPartition, tuple[PartitionRecords, int, Any]] = {}

    # -- sending ---------------------------------------------------------------
    def send_fetches(self) -> int:
        """Send a Fetch to every broker that leads a fetchable partition and has none in flight."""
        if self._closed:
            return 0
        cluster = self._client.metadata.cluster
        leaders = cluster.leaders
        assignment = self._subs.assignment
        by_node: dict[int, list[FetchPart]] = {}
        for tp in self._subs.fetchable():
            st = assignment[tp]
            buf = self._buffers.get(tp)
            if buf and (len(buf) > 1 or buf[0].epoch != st.epoch):
                continue
            known = self._fetch_offsets.get(tp)
            if known is not None and known[0] == st.epoch:
                offset = known[1]
            else:
                assert st.position is not None
                offset = st.position
                self._fetch_offsets[tp] = (st.epoch, offset)
            leader = leaders.get(tp)
            if leader is None:
                self._client.metadata.request_update()
                continue
            if leader in self._nodes_in_flight:
                continue
            by_node.setdefault(leader, []).append((tp, st.epoch, offset))
        for node_id, parts in by_node.items():
            body = self._requests.build(node_id, ((tp, offset) for tp, _, offset in parts))
            future = self._client.send(node_id, FETCH, body)
            self._nodes_in_flight.add(node_id)
            full = self._requests.is_full(body)
            future.add_callback(partial(self._on_response, node_id, parts, full))
        return len(by_node)

    # -- receiving -------------------------------------------------------------
    def _on_response(
        self,
        node_id: int,
        parts: list[FetchPart],
        full: bool,
        future: RequestFuture,
    ) -> None:
        self._nodes_in_flight.discard(node_id)
        if self._closed:
            return  # answers a request of the closed session: nothing to apply or send
        if future.failed:
            log.debug("fetch from node %d failed: %s", node_id, future.exception)
            self._requests.handle_error(node_id)
            self._client.metadata.request_update()
            return
        body = future.value
        top = body.get("error_code", 0)
        if not self._requests.handle_response(node_id, body):
            # The session is gone or out of step: the next request is full.
            log.info("fetch session with node %d ended by error %d", node_id, top)
            return
        if top:
            log.warning("fetch from node %d failed with error %d", node_id, top)
            return
        sent = {tp: (epoch, offset) for tp, epoch, offset in parts}
        answered: set[TopicPartition] = set()
        for topic_resp in body["responses"]:
            topic = topic_resp["topic"]
            for p in topic_resp["partitions"]:
                tp = TopicPartition(topic, p["partition_index"])
                answered.add(tp)
                request = sent.get(tp)
                st = self._subs.assignment.get(tp)
                if request is None or st is None or st.epoch != request[0]:
                    continue  # unassigned or moved by a seek since we asked
                if self._fetch_offsets.get(tp) != request:
                    continue
                self._handle_partition(tp, st, p, request[0], request[1])
        if not full:
            self._no_news(sent, answered)
        self.send_fetches()

    def _no_news(
        self, sent: dict[TopicPartition, tuple[int, int]], answered: set[TopicPartition]
    ) -> None:
        """Partitions an incremental answer left out have no records at their offset."""
        for tp, request in sent.items():
            if tp in answered or self._fetch_offsets.get(tp) != request:
                continue
            st = self._subs.assignment.get(tp)
            if st is not None and st.epoch == request[0]:
                st.last_empty_fetch = request[1]

    def _handle_partition(
        self, tp: TopicPartition, st: Any, p: dict[str, Any], epoch: int, offset: int
    ) -> None:
        code = p["error_code"]
        if code == 0:
            st.high_watermark = p["high_watermark"]
            st.last_stable_offset = p.get("last_stable_offset", -1)
            st.log_start_offset = p.get("log_start_offset", -1)
            raw = p["records"]
            if not raw:
                st.last_empty_fetch = offset
                return
            aborted: list[tuple[int, int]] = []
            if self._isolation == READ_COMMITTED and p.get("aborted_transactions"):
                aborted = sorted(
                    (a["first_offset"], a["producer_id"]) for a in p["aborted_transactions"]
                )
            chunk = PartitionRecords(
                tp,
                raw if isinstance(raw, bytes) else memoryview(raw),
                offset,
                epoch,
                check_crcs=self._check_crcs,
                aborted=aborted,
                key_deserializer=self._key_deserializer,
                value_deserializer=self._value_deserializer,
            )
            if chunk.next_offset > offset:
                self._fetch_offsets[tp] = (epoch, chunk.next_offset)
                self._buffers.setdefault(tp, deque()).append(chunk)
            return
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            if self._buffers.get(tp):
                return  # records before this offset are still to be drained
            if self._subs.default_reset == "none":
                self._errors.append(OffsetOutOfRangeError(tp, offset))
            else:
                log.info(
                    "[%s-%d] offset %d out of range; resetting", tp.topic, tp.partition, offset
                )
                self._subs.request_reset(tp)
            return
        error = ErrorCode(code) if code in ErrorCode._value2member_map_ else code
        if error in _REFRESH_METADATA:
            log.debug("[%s-%d] fetch error %s; refreshing metadata", tp.topic, tp.partition, error)
            self._client.metadata.request_update()
            return
        self._errors.append(kafka_error(code, f"fetch of {tp.topic}-{tp.partition}"))

    # -- handing out -----------------------------------------------------------
    def fetched_records(self, max_records: int) -> list[ConsumerRecord]:
        """Up to ``max_records`` buffered records, advancing positions past them.

        Raises the first deferred fetch error (out of range with reset none,
        authorization, corrupt data) so the application sees it on ``poll``.
        """
        if self._errors:
            raise self._errors.pop(0)
        out: list[ConsumerRecord] = []
        if not self._buffers:
            return out
        assignment = self._subs.assignment
        for tp in list(self._buffers):
            buf = self._buffers[tp]
            st = assignment.get(tp)
            if st is None:
                del self._buffers[tp]
                continue
            if st.paused:
                continue
            while buf and len(out) < max_records:
                chunk = buf[0]
                if chunk.epoch != st.epoch:
                    buf.clear()
                    break
                try:
                    taken, exhausted = chunk.take(max_records - len(out))
                except SamsaError as exc:
                    # Drop the rest and refetch from the position, where the
                    # error repeats, as in Kafka.  Records already taken go first.
                    buf.clear()
                    self._fetch_offsets.pop(tp, None)
                    if not out:
                        raise
                    self._errors.append(exc)
                    break
                if out:
                    out += taken
                else:
                    out = taken
                if exhausted:
                    st.position = chunk.next_offset
                    buf.popleft()
                elif taken:
                    st.position = taken[-1].offset + 1
            if buf:
                # Rotate so the next poll starts with another partition (fairness).
                self._buffers[tp] = self._buffers.pop(tp)
            else:
                del self._buffers[tp]
            if len(out) >= max_records:
                break
        return out

    def fetched_arrow(
        self, max_records: int, convert: Callable[[PartitionRecords, int], Any]
    ) -> list[Any]:
        """Up to ``max_records`` buffered records as Arrow record batches, advancing positions.

        The columnar twin of :meth:`fetched_records`, with the same positions
        and errors: ``convert(chunk, position)`` turns a buffered fetch's
        records from ``position`` on into one RecordBatch; what a call leaves
        of it is kept for the next call, and the chunk is told where the
        record path (``poll()``) would continue.
        """
        if self._errors:
            raise self._errors.pop(0)
        out: list[Any] = []
        taken = 0
        assignment = self._subs.assignment
        for tp in list(self._buffers):
            buf = self._buffers[tp]
            st = assignment.get(tp)
            if st is None:
                del self._buffers[tp]
                self._arrow_rest.pop(tp, None)
                continue
            if st.paused:
                continue
            while buf and taken < max_records:
                chunk = buf[0]
                if chunk.epoch != st.epoch:
                    buf.clear()
                    break
                assert st.position is not None
                rest = self._arrow_rest.pop(tp, None)
                if rest is not None and rest[0] is chunk and rest[1] == st.position:
                    batch = rest[2]
                else:
                    try:
                        batch = convert(chunk, st.position)
                    except SamsaError as exc:
                        buf.clear()
                        self._fetch_offsets.pop(tp, None)
                        if not out:
                            raise
                        self._errors.append(exc)
                        break
                want = max_records - taken
                if batch.num_rows <= want:
                    out.append(batch)
                    taken += batch.num_rows
                    st.position = chunk.next_offset
                    buf.popleft()
                else:
                    out.append(batch.slice(0, want))
                    taken = max_records
                    st.position = batch.column("offset")[want - 1].as_py() + 1
                    chunk.skip_to(st.position)
                    self._arrow_rest[tp] = (chunk, st.position, batch.slice(want))
            if buf:
                self._buffers[tp] = self._buffers.pop(tp)
            else:
                del self._buffers[tp]
            if taken >= max_records:
                break
        return out

    def has_buffered(self) -> bool:
        if self._errors:
            return True
        assignment = self._subs.assignment
        for tp, buf in self._buffers.items():
            st = assignment.get(tp)
            if st is not None and not st.paused and buf and buf[0].epoch == st.epoch:
                return True
        return False

    def in_flight(self) -> bool:
        return bool(self._nodes_in_flight)

    @property
    def requests(self) -> FetchRequests:
        """The Fetch requests and the fetch session with each broker."""
        return self._requests

    def close_sessions(self) -> list[RequestFuture]:
        """Stop fetching, and send a last Fetch with FINAL_EPOCH to each broker
        with no fetch in flight, which answers it at once and frees our
        session's slot.  Behind a parked long poll it would cost up to
        ``fetch.max.wait.ms`` on every close, so those sessions are left to the
        broker's eviction (Kafka's consumer waits instead)."""
        self._closed = True
        finals = self._requests.close(skip=self._nodes_in_flight)
        return [self._client.send(node_id, FETCH, body) for node_id, body in finals.items()]
