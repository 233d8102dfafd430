"""The catalog a reader outside the broker lists a partition's remote segments with."""

from __future__ import annotations

from samsa.tiered.catalog import RemoteCatalog
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
    encode_remote_log_metadata,
)

S = RemoteLogSegmentState
TIP = TopicIdPartition(b"\x01" * 16, "orders", 0)
OTHER = TopicIdPartition(b"\x02" * 16, "payments", 0)


def segment(
    tip: TopicIdPartition, start: int, end: int, at: int, epoch: int = 0
) -> RemoteLogSegmentMetadata:
    return RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate_new(tip),
        start_offset=start,
        end_offset=end,
        max_timestamp_ms=at,
        broker_id=1,
        event_timestamp_ms=at,
        segment_size_bytes=(end - start + 1) * 10,
        segment_leader_epochs=(EpochEntry(epoch, start),),
    )


def update(
    seg: RemoteLogSegmentMetadata, state: RemoteLogSegmentState, at: int
) -> RemoteLogSegmentMetadataUpdate:
    return RemoteLogSegmentMetadataUpdate(seg.segment_id, at, state, 1)


def test_finished_segments_by_offset_without_overlap() -> None:
    first, second = segment(TIP, 0, 99, 1), segment(TIP, 100, 199, 2)
    abandoned = segment(TIP, 200, 299, 3)  # a leader died mid-copy
    again = segment(TIP, 100, 199, 4, epoch=1)  # a later leader copied it again
    deleted = segment(TIP, 300, 399, 5)
    events = [
        first, update(first, S.COPY_SEGMENT_FINISHED, 1),
        second, update(second, S.COPY_SEGMENT_FINISHED, 2),
        abandoned,
        again, update(again, S.COPY_SEGMENT_FINISHED, 4),
        deleted, update(deleted, S.COPY_SEGMENT_FINISHED, 5),
        update(deleted, S.DELETE_SEGMENT_STARTED, 6), update(deleted, S.DELETE_SEGMENT_FINISHED, 7),
        segment(OTHER, 0, 9, 1),
    ]  # fmt: skip
    catalog = RemoteCatalog(["orders"])
    for event in events:
        catalog.apply(encode_remote_log_metadata(event))
    catalog.apply(b"\x00garbage")
    assert catalog.skipped == 1
    assert catalog.partitions("orders") == [TIP]
    assert catalog.partitions("payments") == []
    assert [s.segment_id for s in catalog.segments(TIP)] == [first.segment_id, again.segment_id]
    assert catalog.size_bytes(TIP) == 2000


def test_a_deleted_partition_is_forgotten() -> None:
    seg = segment(TIP, 0, 9, 1)
    catalog = RemoteCatalog()
    for event in (
        seg,
        update(seg, S.COPY_SEGMENT_FINISHED, 1),
        RemotePartitionDeleteMetadata(
            TIP, RemotePartitionDeleteState.DELETE_PARTITION_FINISHED, 2, 1
        ),
    ):
        catalog.apply(encode_remote_log_metadata(event))
    assert catalog.partitions("orders") == []
    assert catalog.segments(TIP) == []
