"""The decisions of one replica fetcher, without sockets: Kafka's AbstractFetcherThread logic.

A fetcher copies many partitions from one leader broker.  This object holds
their fetch states, builds the next request (Fetch v12, or OffsetForLeaderEpoch
for partitions that must find their divergence first) and turns each response
into actions on the local logs -- append, truncate, reset, fail -- which the
caller executes in order.  It reads the local logs only through
``FollowerLogs`` (offsets and the epoch cache), so a deterministic simulator
drives it with in-memory logs; fetcher.py is the asyncio loop that sends what
this builds.

Per partition (Kafka's PartitionFetchState):

* FETCHING: fetch from the log end offset, sending the epoch of the last
  batch as ``last_fetched_epoch``.  The leader answers records, or a
  ``diverging_epoch`` when this log holds data it does not: truncate
  (epochs.offset_truncation) and fetch again, as many rounds as it takes.
* TRUNCATING: before fetching, find the divergence: a log without epochs
  (data from before epochs, or empty) truncates to its high watermark, the
  only offset known to be committed; a log with epochs asks the leader with
  OffsetForLeaderEpoch when ``truncate_on_fetch`` is off (leaders that do
  not answer ``diverging_epoch``).
* FAILED: paused until new metadata re-adds the partition (the leader said
  our epoch is stale -- FENCED_LEADER_EPOCH -- or the log failed).

Errors: OFFSET_OUT_OF_RANGE resets from the leader's offsets (below its log
start: start over at its log start; past its end: truncate to its high
watermark, a safe lower bound of its end); the rest back off for
``replica.fetch.backoff.ms`` and retry; a failed request backs off the
whole fetcher (every partition has that leader).  UNKNOWN_TOPIC_OR_PARTITION,
NOT_LEADER_OR_FOLLOWER and UNKNOWN_LEADER_EPOCH mostly mean the leader has not
applied the metadata this follower has -- a new topic's followers often ask a
moment before their leader knows it leads -- so their backoff starts at 10 ms
and doubles up to
``replica.fetch.backoff.ms``: a whole second's wait there held up every
``acks=all`` produce to a new topic or a new leader.  A response is applied only
if the partition is still in the state the request was built from (same
epoch, same offset), so nothing stale is appended after a metadata change.

Each request costs O(partitions that changed), not O(partitions): what a
partition asks for (``_wanted``) is kept between requests and worked out
again only for the partitions whose fetch parameters may have moved -- the
ones a response answered (appends, truncation, the leader's offsets), state
changes (added, removed, backed off, failed, truncating), backoffs that ran
out -- and for all of them every ``FULL_RECHECK_MS``, which catches the log
start that retention moves.  The session handler then compares only those.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.errors import ErrorCode
from samsa.replication.config import ReplicationConfig
from samsa.replication.epochs import NO_EPOCH, offset_truncation
from samsa.replication.fetch_session_handler import (
    INITIAL_EPOCH,
    SESSION_ERRORS,
    FetchSessionHandler,
)
from samsa.replication.fetcher_types import (
    AppendRecords,
    EpochPlan,
    FailPartition,
    FetcherAction,
    FetchPlan,
    FetchStatus,
    FollowerLogs,
    InitialFetchState,
    PartitionFetchState,
    TopicPartition,
    TruncateFullyAndStartAt,
    TruncateTo,
)
from samsa.replication.turn_log import TurnLog
from samsa.storage.leader_epoch_cache import UNDEFINED_EPOCH, EpochEndOffset

LEADER_BEHIND = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
    }
)
LEADER_BEHIND_FIRST_BACKOFF_MS = 10
FULL_RECHECK_MS = 30_000
"""How often every partition's fetch parameters are worked out again, for what
changes without this fetcher: retention moving the log start, which only
goes into the ``log_start_offset`` a follower reports, and no leader decision
reads that."""

log = logging.getLogger(__name__)
paused_log = TurnLog(log)

__all__ = ["FetcherState"]


class FetcherState:
    """Fetch states of the partitions one fetcher copies from ``leader_id``."""

    def __init__(self, replica_id: int, leader_id: int, config: ReplicationConfig) -> None:
        self.replica_id = replica_id
        self.leader_id = leader_id
        self.config = config
        # Insertion order is fetch order: partitions that got data move to the
        # end, so a size-limited response cannot starve the ones behind them.
        self._states: dict[TopicPartition, PartitionFetchState] = {}
        self.session = FetchSessionHandler[TopicPartition]()
        # What each FETCHING, ready partition asks for, kept between requests:
        self._wanted: dict[TopicPartition, dict[str, Any]] = {}
        self._sent: dict[TopicPartition, tuple[int, int]] = {}
        # ... and the partitions whose entries must be worked out again.
        self._stale: set[TopicPartition] = set()
        self._delayed: set[TopicPartition] = set()
        self._truncating: set[TopicPartition] = set()
        self._rechecked_ms: int | None = None
        self._leader_backoff_until_ms: int | None = None
        """Until when a request that failed as a whole keeps the leader unasked."""

    # ------------------------------------------------------------------ membership
    def add_partitions(
        self, initial: Mapping[TopicPartition, InitialFetchState], logs: FollowerLogs
    ) -> None:
        """Start (or restart) fetching: Kafka's ``addPartitions``."""
        for tp, start in initial.items():
            has_epochs = logs.last_fetched_epoch(tp) != UNDEFINED_EPOCH
            status = (
                FetchStatus.FETCHING
                if has_epochs and self.config.truncate_on_fetch
                else FetchStatus.TRUNCATING
            )
            self._states.pop(tp, None)
            self._states[tp] = PartitionFetchState(
                start.current_leader_epoch, status, start.high_watermark
            )
            self._status_changed(tp, status)

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            self._states.pop(tp, None)
            self._status_changed(tp, None)

    def _status_changed(self, tp: TopicPartition, status: FetchStatus | None) -> None:
        self._stale.add(tp)
        if status is FetchStatus.TRUNCATING:
            self._truncating.add(tp)
        else:
            self._truncating.discard(tp)

    def partitions(self) -> list[TopicPartition]:
        return list(self._states)

    def state(self, tp: TopicPartition) -> PartitionFetchState | None:
        return self._states.get(tp)

    def __len__(self) -> int:
        return len(self._states)

    def next_wakeup_ms(self, now_ms: int) -> int | None:
        """When the earliest backed-off partition may fetch again (None: none waits)."""
        if self._leader_backing_off(now_ms):
            return self._leader_backoff_until_ms
        times = [
            s.delayed_until_ms
            for s in map(self._states.get, self._delayed)
            if s is not None and s.status is not FetchStatus.FAILED and s.delayed_until_ms > now_ms
        ]
        return min(times) if times else None

    def _delay(self, tp: TopicPartition, now_ms: int, *, leader_behind: bool = False) -> None:
        state = self._states.get(tp)
        if state is None:
            return
        backoff = self.config.replica_fetch_backoff_ms
        if leader_behind:
            shift = min(state.leader_behind_retries, 16)
            backoff = min(backoff, LEADER_BEHIND_FIRST_BACKOFF_MS << shift)
            state.leader_behind_retries += 1
        state.delayed_until_ms = now_ms + backoff
        self._delayed.add(tp)
        self._stale.add(tp)

    def _fail(self, tp: TopicPartition, error: ErrorCode) -> FailPartition:
        state = self._states.get(tp)
        if state is not None:
            state.status = FetchStatus.FAILED
            self._status_changed(tp, FetchStatus.FAILED)
        paused_log.info(
            "fetching paused",
            "[%s-%d] fetching paused until new metadata: %s",
            tp[0],
            tp[1],
            error.name,
        )
        return FailPartition(tp, error)

    # ------------------------------------------------------------------ truncation
    def truncate_without_epochs(self, logs: FollowerLogs) -> list[FetcherAction]:
        """Truncating partitions whose log has no epochs go to their high watermark
        (Kafka's ``truncateToHighWatermark``); no request needed."""
        actions: list[FetcherAction] = []
        for tp in self._in_order(self._truncating):
            state = self._states[tp]
            if logs.last_fetched_epoch(tp) == UNDEFINED_EPOCH:
                if state.truncation_offset < logs.log_end_offset(tp):
                    actions.append(TruncateTo(tp, state.truncation_offset))
                state.status = FetchStatus.FETCHING
                self._status_changed(tp, FetchStatus.FETCHING)
        return actions

    def _in_order(self, tps: set[TopicPartition]) -> list[TopicPartition]:
        """``tps`` in fetch order (none, and no scan, in the usual idle case)."""
        if not tps:
            return []
        return [tp for tp in self._states if tp in tps]

    def build_epoch_request(self, now_ms: int, logs: FollowerLogs) -> EpochPlan | None:
        if self._leader_backing_off(now_ms):
            return None
        sent: dict[TopicPartition, tuple[int, int]] = {}
        topics: dict[str, list[dict[str, Any]]] = {}
        for tp in self._in_order(self._truncating):
            state = self._states[tp]
            if not state.ready(now_ms):
                continue
            epoch = logs.last_fetched_epoch(tp)
            if epoch == UNDEFINED_EPOCH:
                continue
            sent[tp] = (epoch, state.current_leader_epoch)
            topics.setdefault(tp[0], []).append(
                {
                    "partition": tp[1],
                    "current_leader_epoch": state.current_leader_epoch,
                    "leader_epoch": epoch,
                }
            )
        if not sent:
            return None
        body = {
            "replica_id": self.replica_id,
            "topics": [{"topic": t, "partitions": p} for t, p in topics.items()],
        }
        return EpochPlan(body, sent)

    def handle_epoch_response(
        self, plan: EpochPlan, body: Mapping[str, Any], now_ms: int, logs: FollowerLogs
    ) -> list[FetcherAction]:
        actions: list[FetcherAction] = []
        for topic in body.get("topics") or ():
            for p in topic.get("partitions") or ():
                tp = (topic["topic"], p["partition"])
                state = self._states.get(tp)
                if (
                    tp not in plan.sent
                    or state is None
                    or state.status is not FetchStatus.TRUNCATING
                ):
                    continue
                code = _code(p.get("error_code", 0))
                if code is ErrorCode.FENCED_LEADER_EPOCH:
                    actions.append(self._fail(tp, code))
                elif code is not ErrorCode.NONE:
                    log.debug("[%s-%d] OffsetForLeaderEpoch: %s", tp[0], tp[1], code.name)
                    self._delay(tp, now_ms, leader_behind=code in LEADER_BEHIND)
                else:
                    leader = EpochEndOffset(p.get("leader_epoch", -1), p.get("end_offset", -1))
                    actions += self._truncate_to_leader(tp, state, leader, logs)
        return actions

    def _truncate_to_leader(
        self,
        tp: TopicPartition,
        state: PartitionFetchState,
        leader: EpochEndOffset,
        logs: FollowerLogs,
    ) -> list[FetcherAction]:
        end = logs.log_end_offset(tp)
        ours = (
            logs.end_offset_for_epoch(tp, leader.epoch)
            if leader.epoch != UNDEFINED_EPOCH
            else EpochEndOffset(UNDEFINED_EPOCH, -1)
        )
        fetch_offset = end if state.status is FetchStatus.FETCHING else state.truncation_offset
        truncation = offset_truncation(leader, ours, end, min(fetch_offset, end))
        if truncation.completed or self.config.truncate_on_fetch:
            state.status = FetchStatus.FETCHING
        self._status_changed(tp, state.status)
        if truncation.offset < end:
            return [TruncateTo(tp, truncation.offset)]
        return []

    # ------------------------------------------------------------------ fetching
    def build_fetch(self, now_ms: int, logs: FollowerLogs) -> FetchPlan | None:
        """The next Fetch v12 request, or None when no partition may fetch now.

        In an incremental session the request names only the partitions whose
        fetch parameters changed; ``sent`` still holds every partition the
        leader reads for it."""
        if self._leader_backing_off(now_ms):
            return None
        config = self.config
        touched = self._touched(now_ms)
        for tp in touched:
            self._evaluate(tp, now_ms, logs)
        if not self._sent:
            return None
        wanted = self._wanted
        if self.session.next_epoch == INITIAL_EPOCH:
            # A full request lists every partition, in fetch order.
            wanted = {tp: wanted[tp] for tp in self._states if tp in wanted}
        session_id, epoch, changed, forgotten = self.session.build_changes(wanted, touched)
        body = {
            "cluster_id": None,
            "replica_id": self.replica_id,
            "max_wait_ms": config.replica_fetch_wait_max_ms,
            "min_bytes": config.replica_fetch_min_bytes,
            "max_bytes": config.replica_fetch_response_max_bytes,
            "isolation_level": 0,
            "session_id": session_id,
            "session_epoch": epoch,
            "topics": _by_topic(changed.items()),
            "forgotten_topics_data": _by_topic((tp, tp[1]) for tp in forgotten),
            "rack_id": "",
        }
        return FetchPlan(body, dict(self._sent))

    def _touched(self, now_ms: int) -> set[TopicPartition]:
        """The partitions whose fetch parameters may have moved since the last
        request (all of them every FULL_RECHECK_MS)."""
        touched, self._stale = self._stale, set()
        states = self._states
        expired = [
            tp for tp in self._delayed if (state := states.get(tp)) is None or state.ready(now_ms)
        ]
        for tp in expired:
            self._delayed.discard(tp)
            touched.add(tp)
        last = self._rechecked_ms
        if last is None or now_ms - last >= FULL_RECHECK_MS or now_ms < last:
            self._rechecked_ms = now_ms
            touched.update(states)
            touched.update(self._wanted)
        return touched

    def _evaluate(self, tp: TopicPartition, now_ms: int, logs: FollowerLogs) -> None:
        """Work out again what ``tp`` asks for (nothing unless FETCHING and ready)."""
        state = self._states.get(tp)
        if state is None or state.status is not FetchStatus.FETCHING or not state.ready(now_ms):
            self._wanted.pop(tp, None)
            self._sent.pop(tp, None)
            return
        config = self.config
        fetch_offset = logs.log_end_offset(tp)
        self._sent[tp] = (fetch_offset, state.current_leader_epoch)
        last_epoch = logs.last_fetched_epoch(tp) if config.truncate_on_fetch else NO_EPOCH
        self._wanted[tp] = {
            "partition": tp[1],
            "current_leader_epoch": state.current_leader_epoch,
            "fetch_offset": fetch_offset,
            "last_fetched_epoch": last_epoch,
            "log_start_offset": logs.log_start_offset(tp),
            "partition_max_bytes": config.replica_fetch_max_bytes,
        }

    def handle_request_failure(self, now_ms: int) -> None:
        """The request failed as a whole (connection, timeout): the leader is not
        asked again for ``replica.fetch.backoff.ms``.

        One backoff for the fetcher, not one per partition: every partition
        here has that leader, and backing off each of them made every retry of
        a dead leader of 10,000 partitions work all 10,000 out again (and the
        next wakeup scan them), ~0.1 s of the loop per second while the
        survivors of a failover had the leadership changes to apply."""
        self.session.handle_error()
        self._leader_backoff_until_ms = now_ms + self.config.replica_fetch_backoff_ms

    def _leader_backing_off(self, now_ms: int) -> bool:
        until = self._leader_backoff_until_ms
        if until is None:
            return False
        if now_ms < until:
            return True
        self._leader_backoff_until_ms = None
        return False

    def handle_fetch_response(
        self, plan: FetchPlan, body: Mapping[str, Any], now_ms: int, logs: FollowerLogs
    ) -> list[FetcherAction]:
        top = _code(body.get("error_code", 0))
        if not self.session.handle_response(body) and top in SESSION_ERRORS:
            log.info("fetch session with broker %d lost: %s", self.leader_id, top.name)
            return []  # the next request, a full one, goes out at once
        if top is not ErrorCode.NONE:
            log.info("fetch from broker %d failed: %s", self.leader_id, top.name)
            self.handle_request_failure(now_ms)
            return []
        actions: list[FetcherAction] = []
        got_data: list[TopicPartition] = []
        for topic in body.get("responses") or ():
            for p in topic.get("partitions") or ():
                tp = (topic["topic"], p["partition_index"])
                self._stale.add(tp)  # answered: its offsets may move
                state = self._states.get(tp)
                sent = plan.sent.get(tp)
                if (
                    sent is None
                    or state is None
                    or state.status is not FetchStatus.FETCHING
                    or state.current_leader_epoch != sent[1]
                    or logs.log_end_offset(tp) != sent[0]
                ):
                    continue  # the partition changed while the request was out
                actions += self._partition_response(tp, state, p, now_ms, logs)
                records = p.get("records")
                if records is not None and len(records):
                    got_data.append(tp)
        for tp in got_data:
            self._states[tp] = self._states.pop(tp)
        return actions

    def _partition_response(
        self,
        tp: TopicPartition,
        state: PartitionFetchState,
        p: Mapping[str, Any],
        now_ms: int,
        logs: FollowerLogs,
    ) -> list[FetcherAction]:
        code = _code(p.get("error_code", 0))
        if code is ErrorCode.NONE:
            diverging = p.get("diverging_epoch")
            if diverging is not None and diverging.get("epoch", -1) != UNDEFINED_EPOCH:
                leader = EpochEndOffset(diverging["epoch"], diverging["end_offset"])
                actions = self._truncate_to_leader(tp, state, leader, logs)
                if not actions:
                    log.warning(
                        "[%s-%d] leader reports divergence at %s but nothing to truncate",
                        tp[0],
                        tp[1],
                        leader,
                    )
                    self._delay(tp, now_ms)
                return actions
            records = p.get("records")
            high_watermark = p.get("high_watermark", -1)
            state.lag = max(0, high_watermark - logs.log_end_offset(tp))
            state.leader_behind_retries = 0
            return [
                AppendRecords(
                    tp,
                    b"" if records is None else records,
                    high_watermark,
                    p.get("log_start_offset", -1),
                )
            ]
        if code is ErrorCode.OFFSET_OUT_OF_RANGE:
            return self._out_of_range(tp, p, now_ms, logs)
        if code is ErrorCode.FENCED_LEADER_EPOCH:
            return [self._fail(tp, code)]
        log.debug("[%s-%d] fetch error %s: backing off", tp[0], tp[1], code.name)
        self._delay(tp, now_ms, leader_behind=code in LEADER_BEHIND)
        return []

    def _out_of_range(
        self, tp: TopicPartition, p: Mapping[str, Any], now_ms: int, logs: FollowerLogs
    ) -> list[FetcherAction]:
        """Kafka's ``handleOutOfRangeError``, with the leader's offsets from the
        response: its log start, and its high watermark as a bound of its end."""
        end = logs.log_end_offset(tp)
        leader_start = p.get("log_start_offset", -1)
        leader_high_watermark = p.get("high_watermark", -1)
        if 0 <= end < leader_start:
            log.info(
                "[%s-%d] log end %d is below the leader's log start %d: starting over there",
                tp[0],
                tp[1],
                end,
                leader_start,
            )
            return [TruncateFullyAndStartAt(tp, leader_start)]
        if 0 <= leader_high_watermark < end:
            log.warning(
                "[%s-%d] log end %d is past the leader's (high watermark %d): truncating",
                tp[0],
                tp[1],
                end,
                leader_high_watermark,
            )
            return [TruncateTo(tp, leader_high_watermark)]
        log.info("[%s-%d] offset %d out of range at the leader: backing off", tp[0], tp[1], end)
        self._delay(tp, now_ms)
        return []

    def action_failed(self, action: FetcherAction, error: ErrorCode, now_ms: int) -> None:
        """Executing ``action`` failed: a storage error pauses the partition, the
        rest (a corrupt fetched batch, a role change racing the fetch) back off."""
        if error is ErrorCode.KAFKA_STORAGE_ERROR:
            self._fail(action.tp, error)
        else:
            self._delay(action.tp, now_ms)


def _by_topic(items: Iterable[tuple[TopicPartition, Any]]) -> list[dict[str, Any]]:
    """Per-partition entries grouped under their topic, as Fetch lists them."""
    topics: dict[str, list[Any]] = {}
    for tp, entry in items:
        topics.setdefault(tp[0], []).append(entry)
    return [{"topic": t, "partitions": p} for t, p in topics.items()]


def _code(value: int) -> ErrorCode:
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR
