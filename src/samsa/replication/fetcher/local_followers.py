"""The follower partitions of this broker as its replica fetchers see them.

The ``FollowerReplicas`` a fetcher reads offsets and epochs from and executes
its actions on: append the leader's batches (and take its high watermark and
log start), truncate, start over.  A partition that is gone or no longer a
follower answers NOT_LEADER_OR_FOLLOWER, which the fetcher treats as a
reason to back off (the metadata that removes it from the fetcher follows).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.partition import Partition
from samsa.storage.leader_epoch_cache import EpochEndOffset

log = logging.getLogger(__name__)

__all__ = ["LocalFollowers"]

TopicPartition = tuple[str, int]


class LocalFollowers:
    def __init__(self, partitions: Mapping[TopicPartition, Partition]) -> None:
        self._partitions = partitions

    def _get(self, tp: TopicPartition) -> Partition:
        partition = self._partitions.get(tp)
        if partition is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{tp[0]}-{tp[1]} is not here")
        return partition

    def log_end_offset(self, tp: TopicPartition) -> int:
        return self._get(tp).log_end_offset

    def log_start_offset(self, tp: TopicPartition) -> int:
        return self._get(tp).log_start_offset

    def last_fetched_epoch(self, tp: TopicPartition) -> int:
        return self._get(tp).last_fetched_epoch()

    def end_offset_for_epoch(self, tp: TopicPartition, epoch: int) -> EpochEndOffset:
        return self._get(tp).log.end_offset_for_epoch(epoch)

    def append_fetched(
        self,
        tp: TopicPartition,
        records: bytes | memoryview,
        leader_high_watermark: int,
        leader_log_start_offset: int,
    ) -> None:
        partition = self._get(tp)
        if len(records):
            partition.append_as_follower(records)
        partition.update_follower_high_watermark(leader_high_watermark)
        partition.maybe_increment_log_start_offset(leader_log_start_offset)

    def truncate_to(self, tp: TopicPartition, offset: int) -> None:
        self._get(tp).truncate_to(offset)

    def truncate_fully_and_start_at(self, tp: TopicPartition, offset: int) -> None:
        self._get(tp).truncate_fully_and_start_at(offset)

    def fetching_failed(self, tp: TopicPartition, error: ErrorCode) -> None:
        log.warning("[%s-%d] stopped fetching until new metadata: %s", tp[0], tp[1], error.name)
