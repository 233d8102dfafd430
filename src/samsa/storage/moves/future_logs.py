"""The future logs of one data dir: copies of partitions on their way here.

A future log is an ordinary Log in a ``<topic>-<partition>.<uuid>-future``
directory (see names), owned by the LogManager of the dir it lies in, beside
and apart from that dir's current logs: it serves no reads or writes of
clients, takes no retention (it follows the current log's start instead), and
is flushed, checkpointed, closed and taken offline with the dir.  Its
recovery point and log start are in the dir's checkpoints under the
partition's key: a partition has at most one log per dir, current or future
(a move never targets the dir the current log is in).

Start-up loads each future log as any other (recovering it after a crash);
what becomes of it -- the copy resumed, or the swap a crash cut short
finished -- is decided over all dirs (see swap).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from samsa.storage.files.checkpoint import TopicPartitionKey
from samsa.storage.log import Clock, Log
from samsa.storage.log_dir_failure import IoErrorReport
from samsa.storage.moves.names import future_dir_name, parse_future_dir
from samsa.storage.topic_config.log_config import LogConfig

logger = logging.getLogger("samsa.storage")

__all__ = ["FutureLogs"]


class FutureLogs:
    """One dir's future logs by partition; thread-safe."""

    def __init__(self, data_dir: Path, clock: Clock, report_io_error: IoErrorReport) -> None:
        self.data_dir = data_dir
        self._clock = clock
        self._report_io_error = report_io_error
        self._logs: dict[TopicPartitionKey, Log] = {}
        self._lock = threading.Lock()

    def load(
        self,
        name: str,
        config_for: Callable[[str], LogConfig],
        recovery_points: Mapping[TopicPartitionKey, int],
        start_offsets: Mapping[TopicPartitionKey, int],
        had_clean_shutdown: bool,
    ) -> Log | None:
        """Open the future log found in directory ``name`` at start-up, with the
        dir's checkpointed offsets (None: not a future log's name, left alone)."""
        key = parse_future_dir(name)
        if key is None:
            return None
        topic, partition = key
        log = Log.open(
            self.data_dir / name,
            topic,
            partition,
            config_for(topic),
            recovery_point=recovery_points.get(key, 0),
            log_start_offset=start_offsets.get(key, 0),
            had_clean_shutdown=had_clean_shutdown,
            clock=self._clock,
            directory_exists=True,
        )
        log.io_error_report = self._report_io_error
        with self._lock:
            stale = self._logs.get(key)
            self._logs[key] = log
        if stale is not None:
            logger.warning("[%s] two future logs in %s: keeping %s", log.name, self.data_dir, name)
            stale.close()
        logger.info("[%s] found future log %s", log.name, log.directory)
        return log

    def create(self, topic: str, partition: int, config: LogConfig) -> Log:
        """The partition's future log here, created empty if there is none."""
        with self._lock:
            existing = self._logs.get((topic, partition))
            if existing is not None:
                return existing
            log = Log.open(
                self.data_dir / future_dir_name(topic, partition),
                topic,
                partition,
                config,
                clock=self._clock,
            )
            log.entry_unsynced = True
            log.io_error_report = self._report_io_error
            self._logs[(topic, partition)] = log
            return log

    def get(self, topic: str, partition: int) -> Log | None:
        return self._logs.get((topic, partition))

    def all(self) -> dict[TopicPartitionKey, Log]:
        with self._lock:
            return dict(self._logs)

    def pop(self, topic: str, partition: int) -> Log | None:
        """Stop owning the partition's future log (its files are the caller's)."""
        with self._lock:
            return self._logs.pop((topic, partition), None)

    def __len__(self) -> int:
        return len(self._logs)
