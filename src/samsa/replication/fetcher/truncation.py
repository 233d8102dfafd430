"""Finding where a follower's log diverges from its leader's, before or while fetching.

Kafka's truncation step of the AbstractFetcherThread, kept apart from the
fetch itself: a TRUNCATING partition whose log has no epochs (data from
before epochs, or empty) truncates to its high watermark, the only offset
known to be committed; one with epochs asks the leader with
OffsetForLeaderEpoch when ``truncate_on_fetch`` is off (leaders that do not
answer ``diverging_epoch``); and a ``diverging_epoch`` in a Fetch answer
truncates the same way (epochs.offset_truncation), as many rounds as it
takes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from samsa.errors import ErrorCode
from samsa.replication.epochs import offset_truncation
from samsa.replication.fetcher.partitions import LEADER_BEHIND, FetcherPartitions, error_code
from samsa.replication.fetcher.types import (
    EpochPlan,
    FetcherAction,
    FetchStatus,
    FollowerLogs,
    PartitionFetchState,
    TopicPartition,
    TruncateTo,
)
from samsa.storage.leader_epoch_cache import UNDEFINED_EPOCH, EpochEndOffset

log = logging.getLogger("samsa.replication.fetcher.state")


class FetcherTruncation(FetcherPartitions):
    """Truncation of the fetcher's partitions to their leader's log."""

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
                code = error_code(p.get("error_code", 0))
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
