"""The per-partition remote metadata cache: states, supersession, reads (Kafka's cases)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogMetadataCache,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    RemotePartitionMetadataStore,
    RemoteResourceNotFoundError,
    TopicIdPartition,
)

S = RemoteLogSegmentState
TIP = TopicIdPartition(b"\x02" * 16, "topic", 0)


def _started(
    start: int, end: int, epochs: dict[int, int], *, txn: bool = False
) -> RemoteLogSegmentMetadata:
    return RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate_new(TIP),
        start,
        end,
        0,
        1,
        0,
        end - start + 1,
        tuple(EpochEntry(e, o) for e, o in sorted(epochs.items())),
        txn_index_empty=not txn,
    )


def _move(
    cache: RemoteLogMetadataCache, segment: RemoteLogSegmentMetadata, state: RemoteLogSegmentState
) -> None:
    cache.update(RemoteLogSegmentMetadataUpdate(segment.segment_id, 1, state, 1))


def _copied(
    cache: RemoteLogMetadataCache, start: int, end: int, epochs: dict[int, int], **kw: bool
) -> RemoteLogSegmentMetadata:
    segment = _started(start, end, epochs, **kw)
    cache.add_copy_in_progress(segment)
    _move(cache, segment, S.COPY_SEGMENT_FINISHED)
    return segment


def _ids(segments: list[RemoteLogSegmentMetadata]) -> list[RemoteLogSegmentId]:
    return [s.segment_id for s in segments]


@pytest.fixture
def cache() -> RemoteLogMetadataCache:
    c = RemoteLogMetadataCache()
    c.mark_initialized()
    return c


def test_reads_follow_the_segment_state(cache: RemoteLogMetadataCache) -> None:
    segment = _started(0, 99, {0: 0})
    cache.add_copy_in_progress(segment)
    assert cache.segment_for(0, 50) is None  # still copying: not readable
    assert _ids(cache.list_segments(0)) == [segment.segment_id]  # but listed, for cleanup
    assert cache.highest_offset_for_epoch(0) is None

    _move(cache, segment, S.COPY_SEGMENT_FINISHED)
    found = cache.segment_for(0, 50)
    assert found is not None and found.state is S.COPY_SEGMENT_FINISHED
    assert cache.segment_for(0, 100) is None  # past its end
    assert cache.highest_offset_for_epoch(0) == 99

    _move(cache, segment, S.DELETE_SEGMENT_STARTED)
    assert cache.segment_for(0, 50) is None
    assert [s.state for s in cache.list_segments(0)] == [S.DELETE_SEGMENT_STARTED]
    assert cache.highest_offset_for_epoch(0) == 99  # it was copied once

    _move(cache, segment, S.DELETE_SEGMENT_FINISHED)
    assert cache.list_segments(0) == [] and list(cache.list_all()) == [] and len(cache) == 0


def test_a_segment_spanning_epochs_is_found_only_within_each(cache: RemoteLogMetadataCache) -> None:
    segment = _copied(cache, 100, 199, {3: 100, 5: 150})
    assert cache.segment_for(3, 149) == cache.get(segment.segment_id)
    assert cache.segment_for(3, 150) is None  # epoch 3 ended at 149 in this segment
    assert cache.segment_for(5, 150) is not None
    assert cache.highest_offset_for_epoch(3) == 149
    assert cache.highest_offset_for_epoch(5) == 199


def test_invalid_transitions_are_dropped(cache: RemoteLogMetadataCache) -> None:
    segment = _copied(cache, 0, 9, {0: 0})
    cache.add_copy_in_progress(segment)  # a repeated "started" after finishing
    _move(cache, segment, S.DELETE_SEGMENT_FINISHED)  # skipping DELETE_SEGMENT_STARTED
    found = cache.get(segment.segment_id)
    assert found is not None and found.state is S.COPY_SEGMENT_FINISHED
    _move(cache, segment, S.COPY_SEGMENT_FINISHED)  # the same state again is fine (retries)
    assert cache.segment_for(0, 5) is not None


def test_updates_of_unknown_segments(cache: RemoteLogMetadataCache) -> None:
    stray = _started(0, 9, {0: 0})
    with pytest.raises(RemoteResourceNotFoundError):
        _move(cache, stray, S.COPY_SEGMENT_FINISHED)
    replaying = RemoteLogMetadataCache()  # not initialized: the metadata may be long gone
    _move(replaying, stray, S.DELETE_SEGMENT_FINISHED)
    assert len(replaying) == 0


def test_finished_segments_are_listed_by_start_offset(cache: RemoteLogMetadataCache) -> None:
    never_finished = _started(0, 4, {0: 0})
    cache.add_copy_in_progress(never_finished)
    a = _copied(cache, 5, 10, {0: 5})
    b = _copied(cache, 11, 100, {0: 11})
    c = _copied(cache, 101, 150, {0: 101})
    assert _ids(cache.list_segments(0)) == _ids([never_finished, a, b, c])
    assert cache.segment_for(0, 90) == cache.get(b.segment_id)


def test_a_larger_copy_of_the_same_offsets_supersedes_the_old_ones(
    cache: RemoteLogMetadataCache,
) -> None:
    """A deposed leader copied 10-100; the new one copied 5-150 (Kafka's overlapping case)."""
    old = _copied(cache, 10, 100, {0: 10})
    new = _copied(cache, 5, 150, {0: 5})
    assert cache.segment_for(0, 11) == cache.get(new.segment_id)
    assert set(_ids(cache.list_segments(0))) == {old.segment_id, new.segment_id}
    assert cache.highest_offset_for_epoch(0) == 150


def test_multiple_overlapping_copies(cache: RemoteLogMetadataCache) -> None:
    _copied(cache, 10, 100, {0: 10})
    _copied(cache, 5, 150, {0: 5})
    _copied(cache, 148, 155, {0: 148})
    last = _copied(cache, 4, 200, {0: 4})
    assert cache.segment_for(0, 11) == cache.get(last.segment_id)
    assert cache.segment_for(0, 152) == cache.get(last.segment_id)
    assert len(cache.list_segments(0)) == 4
    assert cache.highest_offset_for_epoch(0) == 200


def test_a_duplicate_copy_replaces_the_first(cache: RemoteLogMetadataCache) -> None:
    first = _copied(cache, 10, 100, {0: 10})
    second = _copied(cache, 10, 100, {0: 10})
    assert cache.segment_for(0, 11) == cache.get(second.segment_id)
    assert first.segment_id in _ids(cache.list_segments(0))


def test_deleting_a_superseded_copy_keeps_the_new_one_readable(
    cache: RemoteLogMetadataCache,
) -> None:
    old = _copied(cache, 10, 100, {0: 10})
    new = _copied(cache, 10, 150, {0: 10})
    _move(cache, old, S.DELETE_SEGMENT_STARTED)
    _move(cache, old, S.DELETE_SEGMENT_FINISHED)
    assert cache.segment_for(0, 120) == cache.get(new.segment_id)


def test_next_segment_with_a_transaction_index(cache: RemoteLogMetadataCache) -> None:
    _copied(cache, 0, 9, {0: 0})
    _copied(cache, 10, 19, {0: 10})
    with_txn = _copied(cache, 20, 29, {0: 20}, txn=True)
    assert cache.next_segment_with_txn_index(0, 0) == cache.get(with_txn.segment_id)
    assert cache.next_segment_with_txn_index(0, 30) is None


def test_the_store_routes_events_to_loaded_partitions() -> None:
    store = RemotePartitionMetadataStore()
    other = TopicIdPartition(b"\x03" * 16, "other", 1)
    cache = store.maybe_load_partition(TIP)
    assert store.maybe_load_partition(TIP) is cache
    mine, theirs = (
        _started(0, 9, {0: 0}),
        RemoteLogSegmentMetadata(
            RemoteLogSegmentId.generate_new(other), 0, 9, 0, 1, 0, 10, (EpochEntry(0, 0),)
        ),
    )
    store.apply(mine)
    store.apply(theirs)  # not loaded here: ignored
    store.apply(RemoteLogSegmentMetadataUpdate(mine.segment_id, 1, S.COPY_SEGMENT_FINISHED, 1))
    assert not store.is_initialized(TIP)
    store.mark_initialized(TIP)
    assert store.is_initialized(TIP)
    assert cache.segment_for(0, 3) is not None
    assert store.cache(other) is None
    # An update of an unknown segment after the replay is logged, not raised.
    store.apply(RemoteLogSegmentMetadataUpdate(theirs.segment_id, 1, S.COPY_SEGMENT_FINISHED, 1))


def test_a_finished_partition_delete_forgets_the_partition() -> None:
    store = RemotePartitionMetadataStore()
    store.maybe_load_partition(TIP)
    store.apply(_started(0, 9, {0: 0}))
    for state in RemotePartitionDeleteState:
        store.apply(RemotePartitionDeleteMetadata(TIP, state, 1, 0))
        if state is not RemotePartitionDeleteState.DELETE_PARTITION_FINISHED:
            assert store.delete_state(TIP) is state
    assert store.cache(TIP) is None
    assert store.delete_state(TIP) is None


# ----------------------------------------------------------------------------- properties

_POOL = [
    (0, 99, {0: 0}),
    (0, 149, {0: 0}),
    (100, 199, {0: 100}),
    (50, 250, {0: 50, 2: 200}),
    (200, 299, {2: 200}),
    (150, 299, {0: 150, 2: 200}),
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_POOL) - 1), st.sampled_from(list(S))), max_size=40))
def test_any_event_order_keeps_the_reads_consistent(
    events: list[tuple[int, RemoteLogSegmentState]],
) -> None:
    """Replayed events in any order (retries, leader changes, duplicates) never
    make a read return a segment that is not finished or does not hold the offset."""
    cache = RemoteLogMetadataCache()
    cache.mark_initialized()
    segments = [_started(start, end, epochs) for start, end, epochs in _POOL]
    for index, state in events:
        segment = segments[index]
        try:
            if state is S.COPY_SEGMENT_STARTED:
                cache.add_copy_in_progress(segment)
            else:
                _move(cache, segment, state)
        except RemoteResourceNotFoundError:
            assert cache.get(segment.segment_id) is None
        for epoch in (0, 1, 2):
            highest = cache.highest_offset_for_epoch(epoch)
            for offset in range(0, 320, 10):
                found = cache.segment_for(epoch, offset)
                if found is None:
                    continue
                assert found.state is S.COPY_SEGMENT_FINISHED
                assert epoch in found.epochs
                assert found.start_offset <= offset <= found.epoch_end_offset(epoch)
                assert highest is not None and highest >= found.epoch_end_offset(epoch)
        assert all(s.state is not S.DELETE_SEGMENT_FINISHED for s in cache.list_all())
