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

The class is assembled from mixins, one module each: fetcher_partitions (the
states in fetch order, adding and removing partitions, backoffs, failure),
fetcher_truncation (finding the divergence: truncation to the high
watermark, OffsetForLeaderEpoch, ``diverging_epoch``) and this module
(building Fetch requests and applying their answers), so the per-request
path finds every method on one class.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.errors import ErrorCode
from samsa.replication.epochs import NO_EPOCH
from samsa.replication.fetcher.partitions import (
    LEADER_BEHIND,
    LEADER_BEHIND_FIRST_BACKOFF_MS,
    error_code,
)
from samsa.replication.fetcher.session_handler import INITIAL_EPOCH, SESSION_ERRORS
from samsa.replication.fetcher.truncation import FetcherTruncation
from samsa.replication.fetcher.types import (
    AppendRecords,
    BuildRemoteLogAuxState,
    FetcherAction,
    FetchPlan,
    FetchStatus,
    FollowerLogs,
    PartitionFetchState,
    TopicPartition,
    TruncateFullyAndStartAt,
    TruncateTo,
)
from samsa.storage.leader_epoch_cache import UNDEFINED_EPOCH, EpochEndOffset

log = logging.getLogger("samsa.replication.fetcher.state")

FULL_RECHECK_MS = 30_000
"""How often every partition's fetch parameters are worked out again, for what
changes without this fetcher: retention moving the log start, which only
goes into the ``log_start_offset`` a follower reports, and no leader decision
reads that."""


REBUILD_TIMEOUT_MS = 120_000
"""How long a partition rebuilding from the remote tier stays paused at most
(the rebuild ends the pause itself when it is done or fails)."""


__all__ = [
    "FULL_RECHECK_MS",
    "LEADER_BEHIND_FIRST_BACKOFF_MS",
    "REBUILD_TIMEOUT_MS",
    "FetcherState",
]


class FetcherState(FetcherTruncation):
    """Fetch states of the partitions one fetcher copies from ``leader_id``: the
    requests to send and the actions each answer asks for (see the module doc)."""

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

    def handle_fetch_response(
        self, plan: FetchPlan, body: Mapping[str, Any], now_ms: int, logs: FollowerLogs
    ) -> list[FetcherAction]:
        top = error_code(body.get("error_code", 0))
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
        code = error_code(p.get("error_code", 0))
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
        if code is ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE:
            log.info(
                "[%s-%d] offset %d is in the leader's remote tier only: rebuilding from it",
                tp[0],
                tp[1],
                logs.log_end_offset(tp),
            )
            self._pause(tp, now_ms, REBUILD_TIMEOUT_MS)
            return [
                BuildRemoteLogAuxState(
                    tp, p.get("log_start_offset", -1), state.current_leader_epoch
                )
            ]
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


def _by_topic(items: Iterable[tuple[TopicPartition, Any]]) -> list[dict[str, Any]]:
    """Per-partition entries grouped under their topic, as Fetch lists them."""
    topics: dict[str, list[Any]] = {}
    for tp, entry in items:
        topics.setdefault(tp[0], []).append(entry)
    return [{"topic": t, "partitions": p} for t, p in topics.items()]
