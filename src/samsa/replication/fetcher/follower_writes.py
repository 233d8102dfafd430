"""How a follower changes its log: appends that keep the leader's offsets, and truncations.

Every change keeps the producer state in step with the log, as Kafka's
follower does: a follower that becomes leader must already know each
idempotent producer's last sequences, or a retry that reached the old leader
would be appended twice.  Appends replay each batch header into the state;
truncations cut the state back (reloading the newest snapshot at or below
the cut and replaying the headers from there when batches it covered are
gone).

The fetched bytes are checked before they are written (CRC and header
fields, as Kafka's ``appendAsFollower`` validates them), and a partial batch
at the end of a fetch response (a size limit cut it) is left for the next
fetch.  These functions run on the event loop, like the leader's appends.
"""

from __future__ import annotations

import logging

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import BatchHeader, iter_batches, validate_batch
from samsa.storage.files.atomic_file import atomic_write
from samsa.storage.leader_epoch_cache import EpochEntry
from samsa.storage.log import Log
from samsa.storage.log_info import AppendInfo
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.snapshot import list_snapshot_files, snapshot_path
from samsa.storage.producers.transaction_replay import replay_batches, replay_log

log = logging.getLogger(__name__)

__all__ = [
    "append_as_follower",
    "restore_files_from_remote",
    "restore_state_from_remote",
    "truncate_fully_and_start_at",
    "truncate_to",
]

BufferLike = bytes | bytearray | memoryview


def append_as_follower(
    log_: Log, producer_state: ProducerStateManager, records: BufferLike
) -> AppendInfo | None:
    """Append the complete batches of ``records`` with their offsets; None when
    there were none.  Raises KafkaError(CORRUPT_MESSAGE) for a bad batch or
    offsets that do not continue the log."""
    view = memoryview(records)
    headers: list[BatchHeader] = []
    positions: list[int] = []
    end = 0
    for pos, header in iter_batches(view):
        validate_batch(view, pos, header)
        headers.append(header)
        positions.append(pos)
        end = pos + header.size
    if not headers:
        return None
    first = headers[0]
    log_end = log_.log_end_offset
    if first.base_offset < log_end:
        if log_end == log_.log_start_offset and first.last_offset >= log_end:
            # The leader's log start is inside this batch (DeleteRecords): an empty
            # log restarts at the batch's base offset, as Kafka's follower does.
            log.info(
                "[%s] first fetched batch starts at %d below the log start %d: "
                "restarting the log there",
                log_.name,
                first.base_offset,
                log_end,
            )
            truncate_fully_and_start_at(log_, producer_state, first.base_offset)
        else:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE,
                f"[{log_.name}] fetched batch at offset {first.base_offset} does not "
                f"continue the log end offset {log_end}",
            )
    _assign_fetched_epochs(log_, headers)
    info = log_.append(view[:end], assign_offsets=False)
    replay_batches(
        log_, producer_state, ((view, p, h) for p, h in zip(positions, headers, strict=True))
    )
    return info


def _assign_fetched_epochs(log_: Log, headers: list[BatchHeader]) -> None:
    """Record each fetched batch's epoch where it starts, as Kafka's follower append
    does for every batch (``maybeAssignEpochStartOffset``), not only for epochs
    newer than the cache's latest.  A replica that led an epoch without writing
    in it keeps that epoch's entry at its log end; fetched data of an older
    epoch at that offset must replace it, or the replica would report the wrong
    ``last_fetched_epoch`` and keep truncating data the leader has (found by the
    cluster simulator, tests/cluster_sim)."""
    previous = None
    for header in headers:
        epoch = header.partition_leader_epoch
        if epoch >= 0 and epoch != previous:
            log_.maybe_assign_epoch_start_offset(epoch, header.base_offset)
        previous = epoch


def truncate_to(log_: Log, producer_state: ProducerStateManager, offset: int) -> bool:
    """Drop everything at or above ``offset`` (whole batches); True if anything went."""
    if not log_.truncate_to(offset):
        return False
    end = log_.log_end_offset
    replay_from = producer_state.truncate_to(end, log_.log_start_offset)
    if replay_from < end:
        replay_log(log_, producer_state, replay_from, end)
    return True


def truncate_fully_and_start_at(
    log_: Log, producer_state: ProducerStateManager, offset: int
) -> None:
    """Empty the log and continue it at ``offset`` (the leader's log start moved
    past everything this follower has)."""
    log_.truncate_fully_and_start_at(offset)
    producer_state.truncate_fully_and_start_at(offset)


def restore_files_from_remote(
    log_: Log,
    next_offset: int,
    log_start_offset: int,
    epochs: list[EpochEntry],
    producer_snapshot: bytes | None,
) -> None:
    """The file half of a follower's rebuild from the remote tier (blocking:
    run it in a worker thread; the log is thread-safe): empty the log and
    continue it at ``next_offset``, below which the remote tier holds
    everything down to ``log_start_offset``, with the epochs up to it and the
    producers' snapshot at it as the only snapshot file."""
    log_.truncate_fully_and_start_at(next_offset, log_start_offset)
    log_.restore_leader_epochs([e for e in epochs if e.start_offset < next_offset])
    for path in list_snapshot_files(log_.directory).values():
        path.unlink(missing_ok=True)
    if producer_snapshot is not None:
        atomic_write(snapshot_path(log_.directory, next_offset), producer_snapshot)


def restore_state_from_remote(
    log_: Log, producer_state: ProducerStateManager, next_offset: int, *, has_snapshot: bool
) -> None:
    """The in-memory half, on the event loop once the files are in place:
    everything below ``next_offset`` counts as copied, and the producers are
    the snapshot's."""
    log_.update_highest_offset_in_remote_storage(next_offset - 1)
    producer_state.truncate_fully_and_start_at(next_offset, delete_snapshots=False)
    if has_snapshot:
        producer_state.load(next_offset, next_offset)
