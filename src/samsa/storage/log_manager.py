"""All partition logs of one data directory, and its checkpoint files.

Layout of a data directory (Kafka's)::

    recovery-point-offset-checkpoint   offsets below which each log is fsynced
    log-start-offset-checkpoint        each log's start offset (DeleteRecords, retention)
    .kafka_cleanshutdown               present only after a clean close
    orders-0/00000000000000000000.log  one directory per partition
    orders-0.3f2a...-delete/           a deleted partition, removed in the background
    __cluster_metadata-0/              the Raft metadata log: not a partition here

Start-up loads every partition directory; if the previous run did not close
cleanly, each log recovers from its checkpointed recovery point (see
log_loader).  A missing or unreadable checkpoint means recovery from offset 0:
slower, never wrong.

Crash behaviour: checkpoints are replaced atomically; the clean-shutdown
marker is written last on close and removed right after start-up, so a crash
at any moment leads to a recovery, never to trusting unflushed data.
The metadata log (``__cluster_metadata-0``) is a Log in the same format, but
the Raft layer opens and owns it: this manager never loads, creates, flushes,
checkpoints, retains or cleans it (everything here goes through its own list of
logs, from which it is absent).

``delete_log`` renames the directory first (atomic), so a crash mid-removal
leaves a ``-delete`` directory that the next start-up removes.

Future logs (``<topic>-<partition>.<uuid>-future``, a partition on its way
here from another dir of the broker, see storage/moves) are this dir's too:
loaded, flushed, checkpointed, closed and taken offline with it, but kept in
``futures``, apart from the logs partitions serve.

An I/O error in any log or checkpoint takes the whole data dir offline
(log_dir_failure): every log refuses reads and writes, nothing more is written
there, and ``close`` leaves out the checkpoints and the clean-shutdown marker,
so the next start-up recovers every log.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from samsa.errors import ErrorCode, KafkaError
from samsa.eventloop.failure_log import FailureLog
from samsa.storage.files.checkpoint import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    CorruptCheckpointError,
    TopicPartitionKey,
    fsync_dir,
    read_checkpoint,
    write_checkpoint,
)
from samsa.storage.log import Clock, Log, wall_clock_ms
from samsa.storage.log_deleter import LogDeleter
from samsa.storage.log_dir_failure import LogDirFailureChannel, io_errors_fail_dir
from samsa.storage.moves.future_logs import FutureLogs
from samsa.storage.moves.names import FUTURE_DIR_SUFFIX
from samsa.storage.topic_config.log_config import LogConfig

logger = logging.getLogger("samsa.storage")

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
DELETE_DIR_SUFFIX = "-delete"
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
METADATA_LOG_DIR = f"{CLUSTER_METADATA_TOPIC}-0"
_SKIPPED_DIR_SUFFIXES = (DELETE_DIR_SUFFIX, "-future", "-stray")


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir(name: str) -> TopicPartitionKey | None:
    """(topic, partition) of a ``<topic>-<partition>`` directory name, else None."""
    topic, dash, partition = name.rpartition("-")
    if not dash or not topic or not partition.isdigit():
        return None
    return topic, int(partition)


class LogManager:
    """Owner of every Log in ``data_dir``; thread-safe for create/delete/lookups."""

    def __init__(
        self,
        data_dir: Path,
        default_config: LogConfig,
        *,
        topic_configs: Mapping[str, LogConfig] | None = None,
        clock: Clock = wall_clock_ms,
        failure_channel: LogDirFailureChannel | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.failure_channel = failure_channel or LogDirFailureChannel()
        self.failure_channel.add_listener(self._on_dir_offline)
        self.default_config = default_config
        self._topic_configs: dict[str, LogConfig] = dict(topic_configs or {})
        self._clock = clock
        self._logs: dict[TopicPartitionKey, Log] = {}
        self._lock = threading.RLock()
        self._closed = False
        self._retention_failures = FailureLog(logger, "retention")
        self._flush_failures = FailureLog(logger, "flushing")
        self._checkpoint_failures = FailureLog(logger, "writing a checkpoint")
        self._deleter = LogDeleter()
        self.futures = FutureLogs(self.data_dir, clock, self.report_io_error)
        """Partitions being copied here from another dir (storage/moves)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._load()

    # -- start-up -------------------------------------------------------

    def _load(self) -> None:
        marker = self.data_dir / CLEAN_SHUTDOWN_FILE
        clean = marker.exists()
        # A dir that never held a log has nothing to recover: say "new", not "unclean".
        new = not clean and not (self.data_dir / RECOVERY_POINT_CHECKPOINT).exists()
        recovery_points = self._read_checkpoint(RECOVERY_POINT_CHECKPOINT)
        start_offsets = self._read_checkpoint(LOG_START_OFFSET_CHECKPOINT)
        for entry in sorted(os.scandir(self.data_dir), key=lambda e: e.name):
            if not entry.is_dir():
                continue
            if entry.name.endswith(DELETE_DIR_SUFFIX):
                logger.info("removing partition directory %s deleted before restart", entry.name)
                shutil.rmtree(entry.path, ignore_errors=True)
                continue
            if entry.name.endswith(FUTURE_DIR_SUFFIX):
                self.futures.load(
                    entry.name, self.config_for, recovery_points, start_offsets, clean
                )
                continue
            key = parse_partition_dir(entry.name)
            if (
                key is None
                or entry.name.endswith(_SKIPPED_DIR_SUFFIXES)
                or key[0] == CLUSTER_METADATA_TOPIC
            ):
                continue
            topic, partition = key
            self._logs[key] = Log.open(
                self.data_dir / entry.name,  # a child: cheaper than parsing the whole path
                topic,
                partition,
                self.config_for(topic),
                recovery_point=recovery_points.get(key, 0),
                log_start_offset=start_offsets.get(key, 0),
                had_clean_shutdown=clean,
                clock=self._clock,
                directory_exists=True,
            )
            self._logs[key].io_error_report = self.report_io_error
        # From here on a crash must lead to recovery.
        marker.unlink(missing_ok=True)
        fsync_dir(self.data_dir)
        if new and not self._logs:
            logger.info("new data directory %s: no logs yet", self.data_dir)
            return
        logger.info(
            "loaded %d logs from %s (%s shutdown)",
            len(self._logs),
            self.data_dir,
            "clean" if clean else "unclean",
        )

    def _read_checkpoint(self, file_name: str) -> dict[TopicPartitionKey, int]:
        try:
            return read_checkpoint(self.data_dir / file_name)
        except (CorruptCheckpointError, OSError) as e:
            logger.warning("ignoring unreadable checkpoint (recovering from 0): %s", e)
            return {}

    # -- logs -----------------------------------------------------------

    def config_for(self, topic: str) -> LogConfig:
        return self._topic_configs.get(topic, self.default_config)

    def get_log(self, topic: str, partition: int) -> Log | None:
        return self._logs.get((topic, partition))

    def all_logs(self) -> dict[TopicPartitionKey, Log]:
        with self._lock:
            return dict(self._logs)

    def log_count(self) -> int:
        """How many logs this dir holds (without copying them, as ``all_logs``
        does: choosing a dir for each of thousands of new partitions did)."""
        return len(self._logs)

    def create_log(self, topic: str, partition: int, config: LogConfig | None = None) -> Log:
        """Create the partition's log, or return it if it already exists.
        The metadata log's topic is refused (see module doc)."""
        with self._lock:
            self._check_open()
            if topic == CLUSTER_METADATA_TOPIC:
                raise KafkaError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"{topic} is the metadata log, not a topic of this log manager",
                )
            existing = self._logs.get((topic, partition))
            if existing is not None:
                return existing
            if config is not None:
                self._topic_configs[topic] = config
            with io_errors_fail_dir(self.report_io_error, f"creating {topic}-{partition}"):
                log = self._open_new_log(topic, partition)
            log.io_error_report = self.report_io_error
            self._logs[(topic, partition)] = log
            return log

    def _open_new_log(self, topic: str, partition: int) -> Log:
        log = Log.open(
            self.data_dir / partition_dir_name(topic, partition),
            topic,
            partition,
            self.config_for(topic),
            clock=self._clock,
        )
        log.entry_unsynced = True
        return log

    def delete_log(self, topic: str, partition: int) -> None:
        """Remove a partition's log: rename its directory to
        ``<topic>-<partition>.<uuid>-delete`` (atomic, so the partition is gone
        even if we crash now), then remove the files in the background
        (see log_deleter)."""
        with self._lock:
            log = self._logs.pop((topic, partition), None)
            if log is None:
                raise KafkaError(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no log for {topic}-{partition}"
                )
            log.rename_dir(self.doomed_dir(topic, partition))
        self.discard(log)

    def doomed_dir(self, topic: str, partition: int) -> Path:
        """A new ``<topic>-<partition>.<uuid>-delete`` path here."""
        name = partition_dir_name(topic, partition)
        return self.data_dir / f"{name}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"

    def discard(self, log: Log) -> None:
        """Close ``log``, already renamed to a ``-delete`` directory and no longer
        this manager's, and remove its files in the background."""
        log.close_for_deletion()
        self._deleter.remove(self.data_dir, log)

    def detach_log(self, topic: str, partition: int) -> Log | None:
        """Stop owning the partition's log, files untouched (a move hands it on)."""
        with self._lock:
            return self._logs.pop((topic, partition), None)

    def attach_log(self, log: Log) -> None:
        """Own ``log``, whose directory is in this dir now (a move's swap)."""
        with self._lock:
            self._check_open()
            log.io_error_report = self.report_io_error
            self._logs[(log.topic, log.partition)] = log

    def remove_future_log(self, topic: str, partition: int) -> bool:
        """Delete the partition's future log here (a move cancelled); False if none."""
        with self._lock:
            future = self.futures.pop(topic, partition)
            if future is None:
                return False
            future.rename_dir(self.doomed_dir(topic, partition))
        self.discard(future)
        return True

    def wait_for_deletions(self) -> None:
        """Until the files of every log deleted so far are gone."""
        self._deleter.wait()

    def update_config(self, topic: str, config: LogConfig) -> None:
        """Apply a topic's new config to all its partitions."""
        with self._lock:
            self._topic_configs[topic] = config
            for (t, _), log in [*self._logs.items(), *self.futures.all().items()]:
                if t == topic:
                    log.update_config(config)

    # -- periodic work ----------------------------------------------------

    def checkpoint_recovery_points(self) -> None:
        self._write_checkpoint(
            RECOVERY_POINT_CHECKPOINT,
            {key: log.recovery_point for key, log in self._checkpointed_logs().items()},
        )

    def checkpoint_log_start_offsets(self) -> None:
        self._write_checkpoint(
            LOG_START_OFFSET_CHECKPOINT,
            {key: log.log_start_offset for key, log in self._checkpointed_logs().items()},
        )

    def _checkpointed_logs(self) -> dict[TopicPartitionKey, Log]:
        """Every log here, future ones too (their key is free: see module doc)."""
        return {**self.futures.all(), **self.all_logs()}

    def _write_checkpoint(self, file_name: str, offsets: dict[TopicPartitionKey, int]) -> None:
        self._check_open()
        with io_errors_fail_dir(self.report_io_error, f"writing {file_name}"):
            write_checkpoint(self.data_dir / file_name, offsets)

    def run_retention(
        self,
        now_ms: int,
        high_watermark: Callable[[TopicPartitionKey], int | None] | None = None,
    ) -> int:
        """Apply retention to every log; checkpoint start offsets if anything went.

        ``high_watermark`` names each partition's high watermark, which
        retention never passes (see ``Log.run_retention``); None for a log
        with no partition.  Each log on its own: one log's failure is logged
        and retried next pass, and retention goes on for the others (see
        failure_log)."""
        deleted = 0
        if self.offline:
            return deleted  # nothing more is written to a failed dir
        for key, log in self.all_logs().items():
            bound = None if high_watermark is None else high_watermark(key)
            deleted += (
                self._retention_failures.run(log.name, partial(log.run_retention, now_ms, bound))
                or 0
            )
        if deleted:
            self._checkpoint_failures.run(
                LOG_START_OFFSET_CHECKPOINT, self.checkpoint_log_start_offsets
            )
        return deleted

    def flush_dirty(self, now_ms: int) -> None:
        """fsync rolled segments and logs past ``flush.ms``; then checkpoint.

        A log whose flush fails keeps its old recovery point, so the
        checkpoint written after it is still true for every log."""
        if self.offline:
            return  # nothing more is written to a failed dir
        for log in self._checkpointed_logs().values():
            self._flush_failures.run(log.name, partial(log.flush_if_due, now_ms))
        if self.offline:
            return  # a flush just failed the dir: no checkpoint written there
        self._checkpoint_failures.run(RECOVERY_POINT_CHECKPOINT, self.checkpoint_recovery_points)

    def flush_all(self) -> None:
        for log in self._checkpointed_logs().values():
            log.flush()
        self.checkpoint_recovery_points()

    def close(self) -> None:
        """Clean shutdown: fsync and close every log, write both checkpoints,
        then the clean-shutdown marker (last, see module doc)."""
        self._deleter.close()
        with self._lock:
            if self._closed:
                return
            if self.offline:
                for log in self._checkpointed_logs().values():
                    log.close()  # only closes the files of an offline log
                self._closed = True
                logger.warning("closed offline log dir %s without checkpoints", self.data_dir)
                return
            for log in self._checkpointed_logs().values():
                log.close()
            self.checkpoint_recovery_points()
            self.checkpoint_log_start_offsets()
            (self.data_dir / CLEAN_SHUTDOWN_FILE).touch()
            fsync_dir(self.data_dir)
            self._closed = True

    # -- failure ----------------------------------------------------------

    @property
    def offline(self) -> bool:
        """The data dir failed an I/O operation (see module doc)."""
        return self.failure_channel.is_offline(str(self.data_dir))

    def report_io_error(self, error: BaseException) -> None:
        """Take the data dir offline after ``error`` (also for files of this dir
        that other layers write, such as the high-watermark checkpoint)."""
        self.failure_channel.maybe_add_offline(str(self.data_dir), error)

    def _on_dir_offline(self, log_dir: str, reason: str) -> None:
        if log_dir != str(self.data_dir):
            return
        for log in self._checkpointed_logs().values():
            log.mark_offline(reason)

    def _check_open(self) -> None:
        if self.offline:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"log dir {self.data_dir} is offline")
        if self._closed:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, "log manager is closed")
