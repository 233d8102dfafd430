"""What ``/metrics`` shows of tiered storage: Kafka's remote-storage metrics, read when scraped.

Kafka's BrokerTopicMetrics for tiered storage, per topic: the copy, fetch and
delete meters (counted by ``counting_storage``), and the gauges computed here
from the partitions this broker leads: copy lag (bytes and segments of rolled
segments not copied yet: Kafka's RemoteCopyLagBytes / RemoteCopyLagSegments),
the remote log's size (RemoteLogSizeBytes) and its segments in the metadata
(RemoteLogMetadataCount); the remote readers' queue
(RemoteLogReaderTaskQueueSize); and Samsa's own: the tiered partitions whose
remote metadata is not replayed yet, and the replays that ran out of time.
Plain values copied at the call.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from samsa.replication.tiering.partition_tasks import LEADER
from samsa.replication.tiering.remote_log_manager import RemoteLogManager
from samsa.tiered.metadata.model import RemoteLogSegmentState

__all__ = ["PartitionTiers", "RemoteStorageStats", "partition_tiers", "remote_storage_stats"]


@dataclass(frozen=True, slots=True)
class RemoteStorageStats:
    counters: dict[str, dict[str, int]]
    """Meter name (``copy_bytes``, ``fetch_errors``...) -> per topic, since start."""
    copy_lag_bytes: dict[str, int] = field(default_factory=dict)
    copy_lag_segments: dict[str, int] = field(default_factory=dict)
    remote_log_size_bytes: dict[str, int] = field(default_factory=dict)
    remote_log_metadata_count: dict[str, int] = field(default_factory=dict)
    reader_queue_size: int = 0
    metadata_not_ready: int = 0
    """Tiered partitions hosted here whose remote metadata is not replayed yet."""
    metadata_replay_timeouts: int = 0
    """Loads of a partition's remote metadata that ran out of time, since start."""


def remote_storage_stats(rlm: RemoteLogManager) -> RemoteStorageStats:
    counters = rlm.counters
    meters = {
        name: dict(getattr(counters, name))
        for name in (
            "copy_bytes",
            "copy_requests",
            "copy_errors",
            "fetch_bytes",
            "fetch_requests",
            "fetch_errors",
            "delete_requests",
            "delete_errors",
        )
    }
    lag_bytes: defaultdict[str, int] = defaultdict(int)
    lag_segments: defaultdict[str, int] = defaultdict(int)
    size: defaultdict[str, int] = defaultdict(int)
    count: defaultdict[str, int] = defaultdict(int)
    finished = RemoteLogSegmentState.COPY_SEGMENT_FINISHED
    not_ready = 0
    for state in list(rlm.partitions.values()):
        not_ready += not state.ready
        if state.role != LEADER:
            continue
        topic = state.tip.topic
        log = state.log.partition.log
        copied = log.highest_offset_in_remote_storage
        rolled = log.segments[:-1]
        waiting = [s for s in rolled if s.base_offset > copied]
        lag_bytes[topic] += sum(s.size for s in waiting)
        lag_segments[topic] += len(waiting)
        cache = rlm.metadata.manager.cache(state.tip)
        if cache is not None:
            segments = list(cache.list_all())
            count[topic] += len(segments)
            size[topic] += sum(s.segment_size_bytes for s in segments if s.state is finished)
    return RemoteStorageStats(
        meters,
        dict(lag_bytes),
        dict(lag_segments),
        dict(size),
        dict(count),
        rlm.reads_waiting,
        not_ready,
        rlm.replay_timeouts + sum(s.replay_timeouts for s in rlm.partitions.values()),
    )


@dataclass(frozen=True, slots=True)
class PartitionTiers:
    """One tiered partition's two tiers as this broker's replica knows them
    (the console's topic page): where each starts and ends, their sizes, and
    what is rolled but not copied yet."""

    local_log_start_offset: int
    local_size_bytes: int
    log_start_offset: int
    """The partition's start, remote tier included (ListOffsets -2)."""
    tiered_end_offset: int
    """The last offset the remote tier holds (ListOffsets -5; -1: none)."""
    remote_size_bytes: int
    remote_segments: int
    copy_lag_bytes: int
    copy_lag_segments: int
    ready: bool
    """The replica replayed its remote metadata (else the remote figures are 0)."""


def partition_tiers(rlm: RemoteLogManager, topic: str, index: int) -> PartitionTiers | None:
    """The tiers of this broker's replica of a tiered partition; None when
    the partition is not tiered here."""
    state = rlm.tiered(topic, index)
    if state is None:
        return None
    log = state.log.partition.log
    copied = log.highest_offset_in_remote_storage
    segments = log.segments
    waiting = [s for s in segments[:-1] if s.base_offset > copied]
    cache = rlm.metadata.manager.cache(state.tip) if state.ready else None
    remote = [] if cache is None else list(cache.list_all())
    finished = RemoteLogSegmentState.COPY_SEGMENT_FINISHED
    return PartitionTiers(
        local_log_start_offset=log.local_log_start_offset,
        local_size_bytes=log.size_bytes,
        log_start_offset=log.log_start_offset,
        tiered_end_offset=copied,
        remote_size_bytes=sum(s.segment_size_bytes for s in remote if s.state is finished),
        remote_segments=sum(1 for s in remote if s.state is finished),
        copy_lag_bytes=sum(s.size for s in waiting),
        copy_lag_segments=len(waiting),
        ready=state.ready,
    )
