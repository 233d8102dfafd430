"""The partitions one replica fetcher copies, their states and their backoffs (see fetcher_state.py).

Split from the FetcherState so each file holds one concern: this base holds
the partitions' fetch states in fetch order, adding and removing them, and
what pauses them -- a backoff for one partition, one for the whole fetcher
when a request fails, FAILED until new metadata; fetcher_truncation finds
where a follower's log diverges, fetcher_state builds Fetch requests and
applies their responses.

The backoffs are the ones fetcher_state's module doc describes: per
partition, doubling from 10 ms for the errors that mean the leader is
behind, and one for the whole fetcher after a failed request.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.errors import ErrorCode
from samsa.replication.config import ReplicationConfig
from samsa.replication.fetcher.session_handler import (
    FetchSessionHandler,
)
from samsa.replication.fetcher.types import (
    FailPartition,
    FetcherAction,
    FetchStatus,
    FollowerLogs,
    InitialFetchState,
    PartitionFetchState,
    TopicPartition,
)
from samsa.replication.turn_log import TurnLog
from samsa.storage.leader_epoch_cache import UNDEFINED_EPOCH

LEADER_BEHIND = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
    }
)
LEADER_BEHIND_FIRST_BACKOFF_MS = 10

log = logging.getLogger("samsa.replication.fetcher.state")
paused_log = TurnLog(log)


class FetcherPartitions:
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

    def _pause(self, tp: TopicPartition, now_ms: int, duration_ms: int) -> None:
        """No fetches for ``tp`` for ``duration_ms`` (or until ``resume``)."""
        state = self._states.get(tp)
        if state is None:
            return
        state.delayed_until_ms = now_ms + duration_ms
        self._delayed.add(tp)
        self._stale.add(tp)

    def resume(self, tp: TopicPartition, now_ms: int, *, failed: bool = False) -> None:
        """End a ``_pause`` (a rebuild from the remote tier finished); a failed
        one backs off as any failed action does."""
        state = self._states.get(tp)
        if state is None:
            return
        if failed:
            self._delay(tp, now_ms)
            return
        state.delayed_until_ms = now_ms
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

    def _in_order(self, tps: set[TopicPartition]) -> list[TopicPartition]:
        """``tps`` in fetch order (none, and no scan, in the usual idle case)."""
        if not tps:
            return []
        return [tp for tp in self._states if tp in tps]

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

    def action_failed(self, action: FetcherAction, error: ErrorCode, now_ms: int) -> None:
        """Executing ``action`` failed: a storage error pauses the partition, the
        rest (a corrupt fetched batch, a role change racing the fetch) back off."""
        if error is ErrorCode.KAFKA_STORAGE_ERROR:
            self._fail(action.tp, error)
        else:
            self._delay(action.tp, now_ms)


def error_code(value: int) -> ErrorCode:
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR
