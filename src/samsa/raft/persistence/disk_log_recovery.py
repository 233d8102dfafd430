"""Opening the metadata log: its snapshots checked, the log and snapshots made to agree.

Steps, in order (Kafka's KafkaMetadataLog.apply and recoverSnapshots, plus CRC checks):

1. Snapshot files: ``.part`` files (a write a crash interrupted) and
   ``.deleted`` ones are removed; every ``.checkpoint`` is read whole and checked
   (each batch's CRC, a header first, a footer last).  A damaged one is logged and
   deleted, so the node fetches a snapshot from a voter instead of loading bad state.
2. The log: ``samsa.storage.Log`` recovers every segment (the metadata log keeps
   no recovery-point checkpoint, as in Kafka: it is small, being deleted below
   its snapshots), cutting a torn tail; then a truncation a crash interrupted is
   completed (``exact_truncation``).
3. A log behind its latest snapshot -- the snapshot ends past the log end, or has
   a newer epoch than the log's last entry -- is emptied to start at the snapshot
   (a follower crashed after installing a snapshot, before emptying its log).
4. Snapshots below the log start are deleted (nothing needs them).  A log that
   starts above 0 with no snapshot at or above its start has lost the snapshot
   holding its first entries: opening is refused with an explanation.  A log that
   starts below its earliest snapshot starts at that snapshot: segments are
   deleted whole, so the first one outlives the log start that
   ``delete_before_snapshot`` moved up to the snapshot, and that start is not
   checkpointed (as in Kafka); entries below a snapshot are never needed.
5. Everything recovery kept is fsynced, so ``flushed_end_offset`` is the log end.

Each step can be repeated after a crash during it with the same result.
"""

from __future__ import annotations

import logging
from pathlib import Path

from samsa.raft.errors import RaftInvariantError
from samsa.raft.persistence.exact_truncation import finish_pending_truncation
from samsa.raft.persistence.snapshot_codec import SnapshotFormatError, parse_snapshot
from samsa.raft.records import SnapshotId
from samsa.storage import Log
from samsa.storage.files import snapshot_files as files

__all__ = ["reconcile_log_and_snapshots", "recover_snapshot_files"]

logger = logging.getLogger(__name__)


def recover_snapshot_files(directory: Path) -> list[SnapshotId]:
    """Step 1 (module doc): the intact snapshots in ``directory``, oldest first."""
    intact: list[SnapshotId] = []
    for stored in files.recover_snapshots(directory):
        try:
            parse_snapshot(files.read_snapshot(directory, stored))
        except (OSError, SnapshotFormatError) as e:
            logger.error(
                "[%s] snapshot %s is damaged (%s): deleting it; the node will fetch a "
                "snapshot from a voter",
                directory.name,
                files.snapshot_file_name(stored),
                e,
            )
            files.delete_snapshot(directory, stored)
            continue
        intact.append(SnapshotId(stored.end_offset, stored.epoch))
    return intact


def reconcile_log_and_snapshots(
    log: Log, snapshots: list[SnapshotId], *, refetch_lost_prefix: bool = False
) -> list[SnapshotId]:
    """Steps 2 to 5 (module doc) on an opened ``log``; returns the snapshots kept.

    ``refetch_lost_prefix``: when the snapshot holding the log's first entries is
    lost (deleted because it was damaged), empty the log instead of refusing to
    open, so the node fetches the whole metadata log again from the leader (which
    sends its snapshot).  Only where other voters hold the log: a node alone
    would lose its metadata."""
    finish_pending_truncation(log)
    start, end = log.log_start_offset, log.log_end_offset
    latest = snapshots[-1] if snapshots else None
    if (
        latest is not None
        and latest.offset >= start
        and not start == end == latest.offset
        and (latest.offset > end or (end > start and latest.epoch > log.latest_epoch()))
    ):
        # Ending where the snapshot does is what a snapshot at a clean stop leaves
        # (its epoch entry moved to the log end, then dropped as past it on open):
        # the snapshot holds every entry, so emptying loses nothing worth a warning.
        logger.log(
            logging.INFO if latest.offset == end else logging.WARNING,
            "[%s] the log [%d, %d) is behind its latest snapshot %s: emptying it to start there",
            log.name,
            start,
            end,
            latest,
        )
        log.truncate_fully_and_start_at(latest.offset)
        start = latest.offset
    kept = _delete_snapshots_below(log.directory, snapshots, start)
    if start > 0 and not kept and refetch_lost_prefix:
        logger.error(
            "[%s] the log starts at %d but the snapshot below it is lost: emptying the "
            "log to fetch the metadata again from the quorum",
            log.name,
            start,
        )
        log.truncate_fully_and_start_at(0)
        start = 0
    if start > 0 and not kept:
        raise RaftInvariantError(
            f"the metadata log in {log.directory} starts at offset {start}, but no "
            f"snapshot holds the entries below it (snapshots found: "
            f"{[(s.offset, s.epoch) for s in snapshots] or 'none'}): its files were lost or "
            f"damaged. Restore the missing snapshot, or remove the directory so that the "
            f"node fetches the metadata log from the quorum again."
        )
    if kept and kept[0].offset > start:
        logger.info("[%s] the log starts at its earliest snapshot %s", log.name, kept[0])
        log.delete_records(kept[0].offset)
    log.flush()
    return kept


def _delete_snapshots_below(
    directory: Path, snapshots: list[SnapshotId], start: int
) -> list[SnapshotId]:
    kept = []
    for snapshot in snapshots:
        if snapshot.offset < start:
            files.delete_snapshot(directory, files.SnapshotId(snapshot.offset, snapshot.epoch))
        else:
            kept.append(snapshot)
    return kept
