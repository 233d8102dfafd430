"""Several log dirs on one broker (JBOD): one LogManager per dir.

Kafka's ``log.dirs`` names several dirs, typically one per disk, so that a
broker uses all its disks and a failing disk costs only the partitions on it.
Each dir is a complete data dir of its own (its ``meta.properties``, its
checkpoints, its clean-shutdown marker), kept by its own LogManager, so that
nothing about one dir is written into another: a dir taken offline by an I/O
error loses nothing the others hold, and the broker keeps serving them.

Placement follows Kafka's LogManager.nextLogDirs: a new partition goes to the
online dir holding the fewest partitions.  At start every dir is scanned and
each partition is found where it is.  A partition present in two dirs is a
broken layout (Kafka refuses to start on it too): nothing is guessed.

A partition moves between dirs by AlterReplicaLogDirs (storage/moves): a
future log in the target dir, the swap, and at start-up the repair of a swap
a crash cut short (``open``).  A move asked for a partition not hosted yet
names its dir for when it is created (Kafka's preferred log dir).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.files.checkpoint import TopicPartitionKey
from samsa.storage.log import Clock, Log, wall_clock_ms
from samsa.storage.log_dir_failure import LogDirFailureChannel, io_errors_fail_dir
from samsa.storage.log_manager import LogManager
from samsa.storage.moves.swap import resolve_at_start
from samsa.storage.topic_config.log_config import LogConfig

logger = logging.getLogger("samsa.storage")


class DuplicateLogError(RuntimeError):
    """The same partition was found in two log dirs."""


class LogDirs:
    """Every log of a broker, over all its log dirs; the LogManager interface
    the broker uses, routing each call to the dir that holds the partition."""

    def __init__(self, managers: list[LogManager]) -> None:
        if not managers:
            raise ValueError("at least one log dir is needed")
        self.managers = managers
        self._by_dir = {str(m.data_dir): m for m in managers}
        self._preferred: dict[TopicPartitionKey, LogManager] = {}
        self._check_no_duplicates()

    @classmethod
    def open(
        cls,
        dirs: list[Path],
        default_config: LogConfig,
        *,
        clock: Clock = wall_clock_ms,
        failure_channel: LogDirFailureChannel | None = None,
    ) -> LogDirs:
        channel = failure_channel or LogDirFailureChannel()
        managers = [
            LogManager(d, default_config, clock=clock, failure_channel=channel) for d in dirs
        ]
        resolve_at_start(managers)
        return cls(managers)

    def _check_no_duplicates(self) -> None:
        seen: dict[TopicPartitionKey, Path] = {}
        for manager in self.managers:
            for key in manager.all_logs():
                if key in seen:
                    raise DuplicateLogError(
                        f"partition {key[0]}-{key[1]} is in two log dirs ({seen[key]} and "
                        f"{manager.data_dir}); remove the stale copy before starting"
                    )
                seen[key] = manager.data_dir

    # -- the dirs ---------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        """The first dir (where the metadata log lives by default)."""
        return self.managers[0].data_dir

    @property
    def failure_channel(self) -> LogDirFailureChannel:
        return self.managers[0].failure_channel

    def manager_of(self, topic: str, partition: int) -> LogManager | None:
        for manager in self.managers:
            if manager.get_log(topic, partition) is not None:
                return manager
        return None

    def manager_for_dir(self, log_dir: str) -> LogManager | None:
        return self._by_dir.get(log_dir)

    def manager_for_path(self, path: str) -> LogManager | None:
        """The dir a client names (absolute, as Kafka's tools give it), however
        ``log.dirs`` spelled it (relative, through a symlink)."""
        for manager in self.managers:
            configured = manager.data_dir
            if path in (str(configured), str(configured.absolute()), str(configured.resolve())):
                return manager
        return None

    @property
    def offline(self) -> bool:
        """Every dir failed: nothing is left to serve."""
        return all(m.offline for m in self.managers)

    # -- the LogManager interface ------------------------------------------

    @property
    def default_config(self) -> LogConfig:
        return self.managers[0].default_config

    @default_config.setter
    def default_config(self, config: LogConfig) -> None:
        for manager in self.managers:
            manager.default_config = config

    def get_log(self, topic: str, partition: int) -> Log | None:
        for manager in self.managers:
            log = manager.get_log(topic, partition)
            if log is not None:
                return log
        return None

    def all_logs(self) -> dict[TopicPartitionKey, Log]:
        logs: dict[TopicPartitionKey, Log] = {}
        for manager in self.managers:
            logs.update(manager.all_logs())
        return logs

    def create_log(self, topic: str, partition: int, config: LogConfig | None = None) -> Log:
        """The partition's log, created in the online dir with the fewest
        partitions if it exists nowhere yet."""
        existing = self.manager_of(topic, partition)
        if existing is not None:
            return existing.create_log(topic, partition, config)
        preferred = self._preferred.pop((topic, partition), None)
        if preferred is not None and not preferred.offline:
            logger.info("[%s-%d] placing log in %s as asked", topic, partition, preferred.data_dir)
            return preferred.create_log(topic, partition, config)
        online = [m for m in self.managers if not m.offline]
        if len(online) == 1:
            return online[0].create_log(topic, partition, config)
        if not online:
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR,
                f"no online log dir for {topic}-{partition}: every log dir has failed",
            )
        target = min(online, key=lambda m: m.log_count())
        if len(self.managers) > 1:
            logger.info("[%s-%d] placing log in %s", topic, partition, target.data_dir)
        return target.create_log(topic, partition, config)

    def delete_log(self, topic: str, partition: int) -> None:
        # The future log first: a crash in between must not leave it alone (see
        # storage/moves/swap: a future log alone is a swap to finish).
        self.remove_future_log(topic, partition)
        manager = self.manager_of(topic, partition)
        if manager is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no log for {topic}-{partition}"
            )
        manager.delete_log(topic, partition)

    def update_config(self, topic: str, config: LogConfig) -> None:
        for manager in self.managers:
            manager.update_config(topic, config)

    def run_retention(
        self,
        now_ms: int,
        high_watermark: Callable[[TopicPartitionKey], int | None] | None = None,
    ) -> int:
        return sum(m.run_retention(now_ms, high_watermark) for m in self.managers)

    def flush_dirty(self, now_ms: int) -> None:
        for manager in self.managers:
            manager.flush_dirty(now_ms)

    def flush_all(self) -> None:
        for manager in self.managers:
            if not manager.offline:
                manager.flush_all()

    def close(self) -> None:
        for manager in self.managers:
            manager.close()

    def logs_by_dir(self) -> Mapping[LogManager, dict[TopicPartitionKey, Log]]:
        return {m: m.all_logs() for m in self.managers}

    # -- moves between dirs (storage/moves) --------------------------------------

    def prefer_dir(self, topic: str, partition: int, manager: LogManager) -> None:
        """Create the partition in ``manager``'s dir when it comes (Kafka's
        ``maybeUpdatePreferredLogDir``: unless its log is there already)."""
        if self.manager_of(topic, partition) is manager or manager.futures.get(topic, partition):
            return
        self._preferred[(topic, partition)] = manager

    def future_log(self, topic: str, partition: int) -> tuple[LogManager, Log] | None:
        """The partition's future log and the dir holding it, if it is moving."""
        for manager in self.managers:
            future = manager.futures.get(topic, partition)
            if future is not None:
                return manager, future
        return None

    def create_future_log(
        self, topic: str, partition: int, manager: LogManager, config: LogConfig
    ) -> Log:
        """The partition's future log in ``manager``'s dir, created empty if
        there is none.  Refused while any dir is offline, as Kafka does: a dir
        that comes back could hold another future log of the partition."""
        offline = [str(m.data_dir) for m in self.managers if m.offline]
        if offline:
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR,
                f"cannot create the future log of {topic}-{partition}: "
                f"log dirs {', '.join(offline)} are offline",
            )
        self._preferred.pop((topic, partition), None)
        what = f"creating the future log of {topic}-{partition}"
        with io_errors_fail_dir(manager.report_io_error, what):
            return manager.futures.create(topic, partition, config)

    def remove_future_log(self, topic: str, partition: int) -> bool:
        """Delete the partition's future log, wherever it is; False if none."""
        return any([m.remove_future_log(topic, partition) for m in self.managers])
