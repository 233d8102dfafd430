"""Remove deleted logs' files in the background, as Kafka's LogManager does.

Deleting a partition renames its directory to ``...-delete`` at once (the
name is free for a new partition and a restart removes what is left), but
removing the files, and making the rename durable, waits: done inline, a
thousand deleted partitions meant a thousand directory fsyncs and tree
removals on the broker's event loop.  Kafka defers the removal likewise
(``file.delete.delay.ms``); here it starts at once, one log after another, in
a single worker thread.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from samsa.storage.files.atomic_file import fsync_dir
from samsa.storage.log import Log

logger = logging.getLogger("samsa.storage")

__all__ = ["LogDeleter"]


class LogDeleter:
    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None

    def remove(self, data_dir: Path, log: Log) -> None:
        """Make the rename of ``log`` (closed already) in ``data_dir`` durable
        and remove its files, later, in the worker."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="samsa-log-deleter")
        self._executor.submit(self._remove, data_dir, log)

    @staticmethod
    def _remove(data_dir: Path, log: Log) -> None:
        try:
            fsync_dir(data_dir)
            log.remove_files()
            logger.info("[%s] deleted log", log.name)
        except Exception:  # a restart removes any -delete directory left
            logger.exception("[%s] removing the deleted log failed", log.name)

    def wait(self) -> None:
        """Until every removal asked for so far is done."""
        if self._executor is not None:
            self._executor.submit(lambda: None).result()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
