"""A log dir that failed an I/O operation, taken offline (Kafka's LogDirFailureChannel).

After a write, fsync or checkpoint of a log dir fails (EIO, ENOSPC, a file
system remounted read-only), nothing written there since the last successful
fsync can be trusted: Linux may have dropped the dirty pages a failed fsync
was about, so retrying the fsync and seeing it succeed proves nothing.  So the
first I/O error takes the whole dir offline, as Kafka does: every log in it
refuses reads and writes from then on with KAFKA_STORAGE_ERROR (a producer
gets an error, never a silent loss and never an acknowledgement of a batch
that was half written), and the broker is told (listeners) so that it reports
the dir, moves the dir's leaderships to other replicas and, when no log dir is
left, stops.  Only a restart brings the dir back: the log loader then
recovers every log from its last recovery point and truncates a torn tail.

Thread-safe: failures are reported from the event loop (appends) and from
worker threads (fsyncs, checkpoints) alike; each dir is reported once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

from samsa.errors import ErrorCode, KafkaError

logger = logging.getLogger("samsa.storage")

OfflineListener = Callable[[str, str], None]
"""Called once per failed dir with the dir and the error, on the failing thread."""


class LogDirFailureChannel:
    """The failed log dirs of one broker and who wants to hear of a new one."""

    def __init__(self) -> None:
        self._offline: dict[str, str] = {}
        self._listeners: list[OfflineListener] = []
        self._lock = threading.Lock()

    def add_listener(self, listener: OfflineListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def offline_dirs(self) -> dict[str, str]:
        """Failed dir -> the error that took it offline."""
        with self._lock:
            return dict(self._offline)

    def is_offline(self, log_dir: str) -> bool:
        with self._lock:
            return log_dir in self._offline

    def maybe_add_offline(self, log_dir: str, error: BaseException) -> None:
        """Take ``log_dir`` offline after ``error`` (a no-op if it already is)."""
        reason = str(error)
        with self._lock:
            if log_dir in self._offline:
                return
            self._offline[log_dir] = reason
            listeners = list(self._listeners)
        logger.error(
            "log dir %s is offline after an I/O error: %s; its partitions answer "
            "KAFKA_STORAGE_ERROR until the broker restarts",
            log_dir,
            reason,
        )
        for listener in listeners:
            listener(log_dir, reason)


IoErrorReport = Callable[[BaseException], None]


@contextlib.contextmanager
def io_errors_fail_dir(report: IoErrorReport | None, what: str) -> Iterator[None]:
    """Report an I/O error of the block (an OSError, or the KAFKA_STORAGE_ERROR a
    lower layer made of one) and raise it as KAFKA_STORAGE_ERROR.  (A hot path
    catches the two itself and calls the functions below: a generator context
    manager costs some microseconds per use.)"""
    try:
        yield
    except OSError as e:
        raise storage_error(report, what, e) from e
    except KafkaError as e:
        report_if_io_error(report, e)
        raise


def storage_error(report: IoErrorReport | None, what: str, error: OSError) -> KafkaError:
    """Report ``error`` and return the KAFKA_STORAGE_ERROR to raise from it."""
    if report is not None:
        report(error)
    return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"{what}: {error}")


def report_if_io_error(report: IoErrorReport | None, error: KafkaError) -> None:
    """Report a KAFKA_STORAGE_ERROR a lower layer made of an OSError; a closed or
    already offline log raises one too, and that is no new failure."""
    if isinstance(error.__cause__, OSError) and report is not None:
        report(error)
