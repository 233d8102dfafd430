"""Leader-epoch lineage rules, on the cases Kafka's RemoteLogManagerTest checks."""

from __future__ import annotations

from samsa.tiered.lineage import (
    LocalSegment,
    OffsetAndEpoch,
    candidate_segments,
    filtered_epochs,
    find_segment,
    highest_remote_offset,
    is_segment_within_leader_epochs,
    next_segment,
    remote_log_start_offset,
)
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogMetadataCache,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    TopicIdPartition,
)

TIP = TopicIdPartition(b"\x01" * 16, "topic", 0)


def _epochs(mapping: dict[int, int]) -> list[EpochEntry]:
    return [EpochEntry(e, o) for e, o in sorted(mapping.items())]


def _segment(start: int, end: int, epochs: dict[int, int]) -> RemoteLogSegmentMetadata:
    return RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate_new(TIP),
        start,
        end,
        100_000,
        1,
        100_000,
        1000,
        tuple(_epochs(epochs)),
        state=RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
    )


def test_epochs_that_wrote_nothing_are_filtered() -> None:
    entries = _epochs({0: 0, 1: 0, 2: 0, 3: 30, 4: 40, 5: 60, 6: 60, 7: 70, 8: 70})
    assert filtered_epochs(entries) == _epochs({2: 0, 3: 30, 4: 40, 6: 60, 8: 70})


LINEAGE = _epochs({0: 0, 1: 10, 2: 20, 3: 30, 4: 40, 5: 50, 7: 70})


def test_segments_within_the_lineage() -> None:
    def within(start: int, end: int, epochs: dict[int, int]) -> bool:
        return is_segment_within_leader_epochs(_segment(start, end, epochs), 90, LINEAGE)

    assert within(15, 35, {1: 15, 2: 20, 3: 30})  # several epochs
    assert within(15, 19, {1: 15})  # one epoch
    assert within(0, 5, {0: 0})  # starts where its epoch starts
    assert within(70, 75, {7: 70})  # the latest epoch
    assert within(15, 29, {1: 15, 2: 20})  # ends where its last epoch ends


def test_segments_outside_the_lineage() -> None:
    def within(start: int, end: int, epochs: dict[int, int]) -> bool:
        return is_segment_within_leader_epochs(_segment(start, end, epochs), 90, LINEAGE)

    assert not within(55, 85, {5: 55, 6: 60, 7: 70})  # epoch 6 is not in the lineage
    assert not within(15, 45, {1: 15, 2: 20, 4: 40})  # epoch 3 is missing from the segment
    whole = {e: o for e, o in LINEAGE}
    assert not within(15, 95, whole)  # ends past the log end
    assert not within(15, 90, whole)  # ends at the log end (exclusive)
    assert not within(5, 25, {1: 5, 2: 20})  # epoch 1 starts before the lineage's epoch 1
    assert not within(15, 35, {1: 15, 2: 20})  # runs past the end of its last epoch


def test_overlapping_segments_after_log_start_moved() -> None:
    """Retention moved the log start to 51: the lineage lost epoch 5 and epoch 7
    starts at 51, but a segment written from epoch 5 on is still valid."""
    lineage = _epochs({7: 51, 9: 100})

    def within(start: int, end: int, epochs: dict[int, int]) -> bool:
        return is_segment_within_leader_epochs(_segment(start, end, epochs), 210, lineage)

    assert within(14, 150, {5: 14, 7: 15, 9: 100})
    assert not within(2, 7, {2: 5, 3: 6})  # entirely before the lineage
    assert not within(15, 250, {7: 15, 9: 100, 10: 200})  # epoch 10 is in the future
    assert not within(75, 100, {8: 75})  # epoch 8 never led
    assert not within(15, 150, {7: 15, 9: 101})  # epoch 9 started elsewhere
    assert not within(99, 150, {9: 99})  # ditto, as the segment's only epoch


def _cache(*segments: RemoteLogSegmentMetadata) -> RemoteLogMetadataCache:
    cache = RemoteLogMetadataCache()
    for segment in segments:
        started = RemoteLogSegmentMetadata(
            segment.segment_id,
            segment.start_offset,
            segment.end_offset,
            segment.max_timestamp_ms,
            segment.broker_id,
            segment.event_timestamp_ms,
            segment.segment_size_bytes,
            segment.segment_leader_epochs,
        )
        cache.add_copy_in_progress(started)
        if segment.state is RemoteLogSegmentState.COPY_SEGMENT_FINISHED:
            cache.update(
                RemoteLogSegmentMetadataUpdate(
                    segment.segment_id,
                    segment.event_timestamp_ms,
                    RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
                    segment.broker_id,
                )
            )
    cache.mark_initialized()
    return cache


def test_highest_remote_offset_on_empty_remote_storage() -> None:
    lineage = _epochs({0: 0, 1: 500})
    assert highest_remote_offset(_cache(), lineage, 600) == OffsetAndEpoch(-1, -1)


def test_highest_remote_offset() -> None:
    lineage = _epochs({0: 0, 1: 500})
    cache = _cache(_segment(0, 200, {0: 0}))
    assert highest_remote_offset(cache, lineage, 600) == OffsetAndEpoch(200, 0)


def test_highest_remote_offset_after_unclean_election() -> None:
    """Epoch 0 reached 200 in the remote tier, but on this log it ended at 149:
    the new leader resumes after 149, in its own history."""
    lineage = _epochs({0: 0, 1: 150, 2: 300})
    cache = _cache(_segment(0, 200, {0: 0}))
    assert highest_remote_offset(cache, lineage, 400) == OffsetAndEpoch(149, 0)


def test_highest_remote_offset_uses_the_newest_epoch_with_copies() -> None:
    lineage = _epochs({0: 0, 3: 100, 5: 250})
    cache = _cache(_segment(0, 99, {0: 0}), _segment(100, 199, {3: 100}))
    assert highest_remote_offset(cache, lineage, 300) == OffsetAndEpoch(199, 3)


def test_find_segment_and_the_next_one() -> None:
    lineage = _epochs({0: 0, 3: 100})
    first, second, third = (
        _segment(0, 99, {0: 0}),
        _segment(100, 149, {3: 100}),
        _segment(150, 199, {3: 150}),
    )
    cache = _cache(first, second, third)
    assert find_segment(cache, lineage, 0) == first
    assert find_segment(cache, lineage, 99) == first
    assert find_segment(cache, lineage, 120) == second
    assert next_segment(cache, lineage, first) == second
    assert next_segment(cache, lineage, second) == third
    assert next_segment(cache, lineage, third) is None
    assert find_segment(cache, lineage, 200) is None
    assert find_segment(cache, _epochs({3: 100}), 50) is None  # before the lineage


def test_remote_log_start_offset() -> None:
    lineage = _epochs({0: 0, 3: 100})
    assert remote_log_start_offset(_cache(), lineage, 75) == 75
    cache = _cache(_segment(100, 149, {3: 100}), _segment(150, 199, {3: 150}))
    assert remote_log_start_offset(cache, lineage, 175) == 100


def test_candidates_skip_the_active_segment() -> None:
    segments = [LocalSegment(5, 10), LocalSegment(10, 10), LocalSegment(15, 10)]
    assert candidate_segments(segments, 20) == [(segments[0], 10), (segments[1], 15)]


def test_candidates_stop_at_the_last_stable_offset() -> None:
    segments = [LocalSegment(5, 1), LocalSegment(10, 1), LocalSegment(15, 1), LocalSegment(20, 1)]
    assert candidate_segments(segments, 15) == [(segments[0], 10), (segments[1], 15)]
    assert candidate_segments(segments[-1:], 30) == []
