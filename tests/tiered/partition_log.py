"""A partition for the tiered tests: its local log of real segment files, and its
``__remote_log_metadata`` as lists that every broker's manager replays."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.tiered.segment_files import BuiltSegment, build_segment

from samsa.tiered.log_view import LocalSegmentFiles
from samsa.tiered.metadata import EpochEntry, TopicIdPartition, decode_remote_log_metadata
from samsa.tiered.metadata.manager import RemoteLogMetadataManager

TIP = TopicIdPartition(b"\x07" * 16, "payments", 0)


class MetadataTopic:
    """``__remote_log_metadata`` as a list per partition; each broker replays it."""

    def __init__(self) -> None:
        self.partitions: dict[int, list[bytes]] = {}
        self.followers: list[RemoteLogMetadataManager] = []

    def manager(self) -> RemoteLogMetadataManager:
        async def produce(partition: int, value: bytes) -> int:
            records = self.partitions.setdefault(partition, [])
            records.append(value)
            for follower in self.followers:
                await follower.apply_record(partition, len(records) - 1, value)
            return len(records) - 1

        made = RemoteLogMetadataManager(produce, partitions=3)
        made.load_partition(TIP)
        for partition, records in self.partitions.items():  # the replay at start-up
            for offset, value in enumerate(records):
                asyncio.run(made.apply_record(partition, offset, value))
        made.mark_initialized(TIP)
        self.followers.append(made)
        return made

    def events(self) -> list[object]:
        return [
            decode_remote_log_metadata(v) for records in self.partitions.values() for v in records
        ]


class Log:
    """A partition's local log made of real segment files."""

    def __init__(self, directory: Path, epochs: list[EpochEntry]) -> None:
        self.directory = directory
        self.segments: list[BuiltSegment] = []
        self.epochs = epochs
        self.lso = 0
        self.highest_remote = -1
        self.log_start = 0
        self.retention = (-1, -1)

    def roll(self, batches: int) -> BuiltSegment:
        base = self.segments[-1].end_offset + 1 if self.segments else 0
        start_ts = (
            max(t for _, t in self.segments[-1].records) + 10
            if self.segments
            else 1_700_000_000_000
        )
        built = build_segment(
            self.directory,
            base,
            [10] * batches,
            start_timestamp=start_ts,  # time moves forward from segment to segment
            leader_epoch=self.epochs[-1].epoch,
        )
        self.segments.append(built)
        self.lso = built.end_offset + 1
        return built

    topic_id_partition = TIP

    def log_start_offset(self) -> int:
        return self.log_start

    def local_log_start_offset(self) -> int:
        return self.segments[0].base_offset

    def log_end_offset(self) -> int:
        return self.segments[-1].end_offset + 1

    def last_stable_offset(self) -> int:
        return self.lso

    def leader_epoch_entries(self) -> list[EpochEntry]:
        return list(self.epochs)

    def segments_from(self, offset: int) -> list[LocalSegmentFiles]:
        return [
            LocalSegmentFiles(
                s.base_offset,
                len(s.data),
                max(t for _, t in s.records),
                s.log,
                s.offset_index,
                s.time_index,
                None,
            )
            for s in self.segments
            if s.end_offset >= offset
        ]

    async def producer_snapshot(self, offset: int) -> Path | None:
        path = self.directory / f"{offset:020d}.snapshot"
        path.write_bytes(b"snapshot-bytes")
        return path

    def local_only_size_bytes(self) -> int:
        return sum(len(s.data) for s in self.segments if s.base_offset > self.highest_remote)

    def retention_ms(self) -> int:
        return self.retention[0]

    def retention_bytes(self) -> int:
        return self.retention[1]

    def update_highest_offset_in_remote_storage(self, offset: int) -> None:
        self.highest_remote = offset

    def highest_offset_in_remote_storage(self) -> int:
        return self.highest_remote

    async def update_log_start_offset_from_remote(self, offset: int) -> None:
        self.log_start = offset
