"""Samsa's log storage in Kafka's on-disk format (synchronous file I/O).

Layers, bottom up: FileRecords (the ``.log`` file) -> OffsetIndex/TimeIndex
(caches rebuilt from the log) -> LogSegment -> Log (one partition) ->
LogManager (a data directory and its checkpoint files).
"""

from samsa.storage.file_region import FileRegion
from samsa.storage.log import Log
from samsa.storage.log_config import LOG_CONFIG_KEYS, ConfigEntry, LogConfig
from samsa.storage.log_info import AppendInfo, FetchDataInfo
from samsa.storage.log_manager import CLUSTER_METADATA_TOPIC, METADATA_LOG_DIR, LogManager
from samsa.storage.segment import LogSegment

__all__ = [
    "CLUSTER_METADATA_TOPIC",
    "LOG_CONFIG_KEYS",
    "METADATA_LOG_DIR",
    "AppendInfo",
    "ConfigEntry",
    "FetchDataInfo",
    "FileRegion",
    "Log",
    "LogConfig",
    "LogManager",
    "LogSegment",
]
