"""The swap that ends a move: the future log becomes the partition's log.

Kafka renames the future dir to the partition's name first and the source
dir to ``-delete`` second; a crash between the two leaves the partition in
two dirs, and its broker refuses to start until an operator deletes one.
Here the order is the other way round, so that every state a crash can leave
has exactly one reading at start-up:

1. the current dir ``S/<t>-<p>`` is renamed ``S/<t>-<p>.<uuid>-delete``: the
   decision.  It is taken only when the future log holds everything the
   current one does (same log end and start, checked by the caller on the
   event loop, where every append happens, so nothing lands in between);
2. the future dir ``D/<t>-<p>.<uuid>-future`` is renamed ``D/<t>-<p>``;
3. the old log is closed and its files removed in the background.

A crash after 1 and before 2 leaves a ``-delete`` dir (removed at start, as
any) and a future log with no current log anywhere: ``resolve_at_start``
finishes the swap by renaming it (a future log is only ever made beside a
current one, so alone it can only be a swap's second half).  A crash before 1
leaves both logs, and the copy resumes; after 2, one log.  A failed rename in
2 renames the current dir back (step 1 undone) and the move is abandoned.

Crash injection for tests: ``crash`` is called at each of ``CRASH_POINTS``
(the broker kills itself there when ``SAMSA_DIR_MOVE_CRASH_AT`` names one).

Durability: the renames are made durable by the next fsync of each dir (the
caller's, and the deleter's before it removes a file); Kafka's own swap does
not fsync either.  A power loss that keeps rename 2 and loses rename 1 would
leave both (refused at start, as Kafka does).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.files.atomic_file import fsync_dir
from samsa.storage.log import Log
from samsa.storage.log_manager import LogManager, partition_dir_name

logger = logging.getLogger("samsa.storage")

__all__ = ["CRASH_POINTS", "SwapError", "replace_current_with_future", "resolve_at_start"]

CRASH_POINTS = ("current_renamed", "future_renamed")


class SwapError(KafkaError):
    """The swap could not be made; the current log is where it was."""


def replace_current_with_future(
    source: LogManager,
    target: LogManager,
    topic: str,
    partition: int,
    crash: Callable[[str], None] | None = None,
) -> tuple[Log, Log]:
    """Make the future log in ``target`` the partition's log and retire the one
    in ``source`` (see the module doc); returns (old log, new log).  The caller
    has checked both hold the same offsets.  Quick: two renames, no fsync."""
    current = source.get_log(topic, partition)
    future = target.futures.get(topic, partition)
    if current is None or future is None:
        raise SwapError(ErrorCode.REPLICA_NOT_AVAILABLE, f"{topic}-{partition}: nothing to swap")
    home = current.directory
    current.rename_dir(source.doomed_dir(topic, partition))  # 1: the decision
    if crash is not None:
        crash("current_renamed")
    try:
        future.rename_dir(target.data_dir / partition_dir_name(topic, partition))  # 2
    except OSError as e:
        current.rename_dir(home)
        target.report_io_error(e)
        raise SwapError(
            ErrorCode.KAFKA_STORAGE_ERROR, f"{topic}-{partition}: promoting the future log: {e}"
        ) from e
    if crash is not None:
        crash("future_renamed")
    target.futures.pop(topic, partition)
    source.detach_log(topic, partition)
    target.attach_log(future)
    source.discard(current)  # 3
    logger.info(
        "[%s-%d] the log in %s replaced the one in %s",
        topic,
        partition,
        target.data_dir,
        source.data_dir,
    )
    return current, future


def sync_dirs(*managers: LogManager) -> None:
    """Make a swap's renames durable (blocking: call off the event loop)."""
    for manager in managers:
        fsync_dir(manager.data_dir)


def resolve_at_start(managers: Sequence[LogManager]) -> None:
    """Settle the future logs found at start-up (see the module doc): one with
    no current log anywhere finishes its swap; one whose current log is in its
    own dir (never made so; a broken layout) is dropped, the current log kept."""
    current = {key for m in managers for key in m.all_logs()}
    for manager in managers:
        for (topic, partition), future in manager.futures.all().items():
            if manager.get_log(topic, partition) is not None:
                logger.warning(
                    "[%s-%d] a future log beside the current one in %s: removing the future log",
                    topic,
                    partition,
                    manager.data_dir,
                )
                manager.remove_future_log(topic, partition)
            elif (topic, partition) not in current:
                logger.info(
                    "[%s-%d] finishing the swap a restart cut short: %s becomes the log",
                    topic,
                    partition,
                    future.directory,
                )
                future.rename_dir(manager.data_dir / partition_dir_name(topic, partition))
                manager.futures.pop(topic, partition)
                manager.attach_log(future)
                fsync_dir(manager.data_dir)
                current.add((topic, partition))
