"""Which remote segments total retention deletes (Kafka's expiration rules)."""

from __future__ import annotations

from samsa.tiered.expiration import ExpirationPlan, RetentionLimits, plan_expiration
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogMetadataCache,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    TopicIdPartition,
)

S = RemoteLogSegmentState
TIP = TopicIdPartition(b"\x0a" * 16, "t", 0)
NOW = 1_000_000


def _cache() -> RemoteLogMetadataCache:
    cache = RemoteLogMetadataCache()
    cache.mark_initialized()
    return cache


def _segment(
    cache: RemoteLogMetadataCache,
    start: int,
    end: int,
    epochs: dict[int, int],
    *,
    max_ts: int = NOW,
    size: int = 100,
    state: RemoteLogSegmentState = S.COPY_SEGMENT_FINISHED,
) -> RemoteLogSegmentMetadata:
    segment = RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate_new(TIP),
        start,
        end,
        max_ts,
        1,
        0,
        size,
        tuple(EpochEntry(e, o) for e, o in sorted(epochs.items())),
    )
    cache.add_copy_in_progress(segment)
    for step in (S.COPY_SEGMENT_FINISHED, S.DELETE_SEGMENT_STARTED):
        if state >= step:
            cache.update(RemoteLogSegmentMetadataUpdate(segment.segment_id, 0, step, 1))
    return segment


def _plan(cache: RemoteLogMetadataCache, epochs: list[EpochEntry], **kw: object) -> ExpirationPlan:
    args: dict[str, object] = {
        "log_start_offset": 0,
        "log_end_offset": 1000,
        "local_only_bytes": 0,
        "limits": RetentionLimits(),
        "now_ms": NOW,
    }
    args.update(kw)
    return plan_expiration(cache, epochs, **args)  # type: ignore[arg-type,unused-ignore]


LINEAGE = [EpochEntry(0, 0)]


def _ids(segments: list[RemoteLogSegmentMetadata]) -> list[RemoteLogSegmentId]:
    return [s.segment_id for s in segments]


def test_nothing_is_deleted_without_retention() -> None:
    cache = _cache()
    _segment(cache, 0, 99, {0: 0}, max_ts=0)
    plan = _plan(cache, LINEAGE)
    assert plan.delete == [] and plan.new_log_start is None


def test_time_retention_deletes_old_segments_in_order_and_stops_at_the_first_kept() -> None:
    cache = _cache()
    old = _segment(cache, 0, 99, {0: 0}, max_ts=100)
    older_looking = _segment(cache, 100, 199, {0: 100}, max_ts=NOW - 10)
    _segment(cache, 200, 299, {0: 200}, max_ts=50)  # old, but after one that is kept
    plan = _plan(cache, LINEAGE, limits=RetentionLimits(retention_ms=1000))
    assert _ids(plan.delete) == _ids([old])
    assert plan.new_log_start == 100
    assert older_looking.segment_id not in _ids(plan.delete)


def test_size_retention_counts_local_only_data() -> None:
    cache = _cache()
    a = _segment(cache, 0, 99, {0: 0}, size=100)
    b = _segment(cache, 100, 199, {0: 100}, size=100)
    _segment(cache, 200, 299, {0: 200}, size=100)
    # 300 remote + 150 local against 260: 190 over, so one segment goes (two would be 200 > 190).
    plan = _plan(cache, LINEAGE, local_only_bytes=150, limits=RetentionLimits(retention_bytes=260))
    assert _ids(plan.delete) == _ids([a]) and plan.new_log_start == 100
    plan = _plan(cache, LINEAGE, local_only_bytes=250, limits=RetentionLimits(retention_bytes=260))
    assert _ids(plan.delete) == _ids([a, b]) and plan.new_log_start == 200


def test_segments_before_the_log_start_go_without_moving_it() -> None:
    cache = _cache()
    gone = _segment(cache, 0, 99, {0: 0})
    plan = _plan(cache, LINEAGE, log_start_offset=150)
    assert _ids(plan.delete) == _ids([gone]) and plan.new_log_start is None


def test_failed_deletes_are_retried_and_copies_in_flight_stop_the_walk() -> None:
    cache = _cache()
    half_deleted = _segment(cache, 0, 99, {0: 0}, state=S.DELETE_SEGMENT_STARTED)
    copying = _segment(cache, 100, 199, {0: 100}, max_ts=0, state=S.COPY_SEGMENT_STARTED)
    _segment(cache, 200, 299, {0: 200}, max_ts=0)
    limits = RetentionLimits(retention_ms=1000)
    plan = _plan(cache, LINEAGE, limits=limits, being_copied={copying.segment_id})
    assert _ids(plan.delete) == _ids([half_deleted])
    # Once nobody copies it any more, the abandoned attempt is old data like any other.
    plan = _plan(cache, LINEAGE, limits=limits)
    assert [s.start_offset for s in plan.delete] == [0, 100, 200]


def test_segments_of_another_history_are_deleted() -> None:
    """An unclean election: this replica's lineage starts at epoch 3; remote
    segments of epochs 1-2 (the lost leader's) are not part of it."""
    cache = _cache()
    theirs = _segment(cache, 0, 99, {1: 0, 2: 50})
    ours = _segment(cache, 100, 199, {3: 100})
    plan = _plan(cache, [EpochEntry(3, 100)], log_start_offset=100)
    assert _ids(plan.delete) == _ids([theirs])
    assert ours.segment_id not in _ids(plan.delete)


def test_segments_off_the_lineage_are_not_counted_or_kept_from_processing() -> None:
    cache = _cache()
    # A deposed leader copied epoch 1 data from 100 on; this replica's epoch 1 starts at 150.
    stray = _segment(cache, 100, 199, {1: 100}, max_ts=0)
    mine_old = _segment(cache, 150, 249, {1: 150}, max_ts=0)
    lineage = [EpochEntry(0, 0), EpochEntry(1, 150)]
    plan = _plan(cache, lineage, limits=RetentionLimits(retention_ms=1000))
    assert _ids(plan.delete) == _ids([mine_old])  # the stray one is neither valid nor blocking
    assert stray.segment_id not in _ids(plan.delete)
