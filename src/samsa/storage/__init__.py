"""Samsa's log storage in Kafka's on-disk format (synchronous file I/O).

Layers, bottom up: FileRecords (the ``.log`` file) -> OffsetIndex/TimeIndex
(caches rebuilt from the log) -> LogSegment -> Log (one partition, with its
LeaderEpochFileCache) -> LogManager (a data directory and its checkpoint
files).  Beside them: KRaft snapshot files (snapshot_files), written next to
the metadata log, which the Raft layer opens itself.
"""

from samsa.storage.files.snapshot_files import SnapshotId, SnapshotWriter
from samsa.storage.leader_epoch_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
    EpochEntry,
    LeaderEpochFileCache,
)
from samsa.storage.log import Log
from samsa.storage.log_info import AppendInfo, FetchDataInfo
from samsa.storage.log_manager import CLUSTER_METADATA_TOPIC, METADATA_LOG_DIR, LogManager
from samsa.storage.segments.file_region import FileRegion
from samsa.storage.segments.segment import LogSegment
from samsa.storage.topic_config.log_config import LOG_CONFIG_KEYS, ConfigEntry, LogConfig

__all__ = [
    "CLUSTER_METADATA_TOPIC",
    "LOG_CONFIG_KEYS",
    "METADATA_LOG_DIR",
    "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
    "AppendInfo",
    "ConfigEntry",
    "EpochEndOffset",
    "EpochEntry",
    "FetchDataInfo",
    "FileRegion",
    "LeaderEpochFileCache",
    "Log",
    "LogConfig",
    "LogManager",
    "LogSegment",
    "SnapshotId",
    "SnapshotWriter",
]
