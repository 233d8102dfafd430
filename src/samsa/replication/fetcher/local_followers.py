"""The follower partitions of this broker as its replica fetchers see them.

The ``FollowerReplicas`` a fetcher reads offsets and epochs from and executes
its actions on: append the leader's batches (and take its high watermark and
log start), truncate, start over.  A partition that is gone or no longer a
follower answers NOT_LEADER_OR_FOLLOWER, which the fetcher treats as a
reason to back off (the metadata that removes it from the fetcher follows).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.fetcher.types import (
    OFFSET_FOR_LEADER_EPOCH_API_KEY,
    OFFSET_FOR_LEADER_EPOCH_VERSION,
)
from samsa.replication.partition import Partition
from samsa.storage.leader_epoch_cache import EpochEndOffset

log = logging.getLogger(__name__)

__all__ = ["LocalFollowers"]

TopicPartition = tuple[str, int]
LIST_OFFSETS_API_KEY, LIST_OFFSETS_VERSION = 2, 8
EARLIEST_LOCAL_TIMESTAMP = -4


class LocalFollowers:
    def __init__(self, partitions: Mapping[TopicPartition, Partition]) -> None:
        self._partitions = partitions
        self.tiering: Any = None
        """The broker's RemoteLogManager, when tiered storage is on."""

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

    async def rebuild_from_remote(
        self,
        tp: TopicPartition,
        request: Callable[[int, int, dict[str, Any]], Awaitable[dict[str, Any]]],
        *,
        replica_id: int,
        leader_log_start_offset: int,
        current_leader_epoch: int,
    ) -> None:
        """Kafka's TierStateMachine: ask the leader where its local log starts
        and in which epoch (ListOffsets -4), and where the epoch before that
        ended (OffsetForLeaderEpoch), then restore from the remote segment that
        ends there (``tiering.remote_reads.rebuild_follower``)."""
        from samsa.replication.tiering import remote_reads

        partition = self._get(tp)
        if self.tiering is None:
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR,
                f"{tp[0]}-{tp[1]}: the leader tiered it, but tiered storage is off here",
            )
        body = {
            "replica_id": replica_id,
            "isolation_level": 0,
            "topics": [
                {
                    "name": tp[0],
                    "partitions": [
                        {
                            "partition_index": tp[1],
                            "current_leader_epoch": current_leader_epoch,
                            "timestamp": EARLIEST_LOCAL_TIMESTAMP,
                        }
                    ],
                }
            ],
        }
        answer = await request(LIST_OFFSETS_API_KEY, LIST_OFFSETS_VERSION, body)
        entry = answer["topics"][0]["partitions"][0]
        if entry["error_code"]:
            raise KafkaError(ErrorCode(entry["error_code"]), f"ListOffsets -4 of {tp[0]}-{tp[1]}")
        local_start, epoch = int(entry["offset"]), int(entry["leader_epoch"])
        earlier = None
        if epoch > 0:
            body = {
                "replica_id": replica_id,
                "topics": [
                    {
                        "topic": tp[0],
                        "partitions": [
                            {
                                "partition": tp[1],
                                "current_leader_epoch": current_leader_epoch,
                                "leader_epoch": epoch - 1,
                            }
                        ],
                    }
                ],
            }
            answer = await request(
                OFFSET_FOR_LEADER_EPOCH_API_KEY, OFFSET_FOR_LEADER_EPOCH_VERSION, body
            )
            found = answer["topics"][0]["partitions"][0]
            if found["error_code"]:
                raise KafkaError(ErrorCode(found["error_code"]), f"epochs of {tp[0]}-{tp[1]}")
            earlier = EpochEndOffset(found["leader_epoch"], found["end_offset"])
        await remote_reads.rebuild_follower(
            self.tiering,
            partition,
            epoch_of_local_start=epoch,
            earlier_epoch_end=earlier,
            leader_local_log_start=local_start,
            leader_log_start=leader_log_start_offset,
        )
