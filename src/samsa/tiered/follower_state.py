"""A follower behind the leader's local log start rebuilds its state from the remote tier.

When a follower fetches an offset the leader no longer has locally, the leader
answers OFFSET_MOVED_TO_TIERED_STORAGE.  The follower then does what Kafka's
TierStateMachine does (``buildRemoteLogAuxState``): it does not copy the
tiered data back, it only needs the state *at* the leader's local log start
to continue from there:

1. the epoch of the offset just before the leader's local start
   (``target_epoch``, asking the leader with OffsetsForLeaderEpoch when the
   local start's epoch is not the first: epochs may have gaps);
2. the remote segment holding that offset, from its own replica of the
   remote metadata (every replica replays ``__remote_log_metadata`` for its
   partitions);
3. that segment's leader-epoch checkpoint and producer snapshot objects
   (``fetch_aux_state``).

The log side then truncates fully and starts at the segment's end + 1
(``RemoteAuxState.next_offset``), assigns the epochs, writes the snapshot as
its producer snapshot at that offset and reloads producer state, sets the log
start to the leader's, and fetches on from ``next_offset``.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.storage.files.checkpoint import CorruptCheckpointError
from samsa.storage.files.leader_epoch_checkpoint import parse_leader_epoch_checkpoint
from samsa.storage.leader_epoch_cache import EpochEndOffset
from samsa.tiered.metadata.cache import RemoteLogMetadataCache
from samsa.tiered.metadata.model import EpochEntry, RemoteLogSegmentMetadata
from samsa.tiered.segment_objects import RemoteStorageManager, SegmentFile
from samsa.tiered.store.base import RemoteObjectNotFoundError, RemoteStorageError

__all__ = ["RemoteAuxState", "fetch_aux_state", "target_epoch"]


def target_epoch(
    epoch_of_local_start: int,
    earlier_epoch_end: EpochEndOffset | None,
    leader_local_log_start: int,
) -> int:
    """The epoch of offset ``leader_local_log_start - 1``.

    ``epoch_of_local_start`` is the leader's epoch at its local start (from
    its ListOffsets -4 answer); ``earlier_epoch_end`` is the leader's answer
    to OffsetsForLeaderEpoch for ``epoch_of_local_start - 1``: the largest
    epoch below it and where that ended.  If that end is past the offset, the
    offset belongs to that earlier epoch (even across a gap of epochs that
    wrote nothing); otherwise to the local start's own epoch.  Epoch 0 has no
    earlier epoch to ask about."""
    if epoch_of_local_start == 0 or earlier_epoch_end is None:
        return epoch_of_local_start
    if earlier_epoch_end.end_offset > leader_local_log_start - 1:
        return earlier_epoch_end.epoch
    return epoch_of_local_start


@dataclass(frozen=True, slots=True)
class RemoteAuxState:
    """What a follower restores before fetching from ``next_offset``."""

    segment: RemoteLogSegmentMetadata
    next_offset: int
    leader_epochs: list[EpochEntry]
    producer_snapshot: bytes | None


async def fetch_aux_state(
    cache: RemoteLogMetadataCache,
    storage: RemoteStorageManager,
    epoch: int,
    leader_local_log_start: int,
) -> RemoteAuxState:
    """The state at the end of the remote segment holding
    ``leader_local_log_start - 1`` in ``epoch`` (see the module doc).

    Raises RemoteStorageError when no finished remote segment holds it (the
    follower retries later, as Kafka's does) or its checkpoint is unreadable;
    store errors propagate as they are (retriable ones stay retriable)."""
    previous = leader_local_log_start - 1
    segment = cache.segment_for(epoch, previous)
    if segment is None:
        raise RemoteStorageError(
            f"no remote segment holds offset {previous} in epoch {epoch}: "
            "the state before the leader's local log start can not be rebuilt yet"
        )
    checkpoint = await storage.fetch_index(segment, SegmentFile.LEADER_EPOCH_CHECKPOINT)
    try:
        epochs = parse_leader_epoch_checkpoint(checkpoint.decode(), str(segment.segment_id))
    except (UnicodeDecodeError, CorruptCheckpointError) as exc:
        raise RemoteStorageError(f"remote segment {segment.segment_id}: {exc}") from None
    try:
        snapshot: bytes | None = await storage.fetch_index(segment, SegmentFile.PRODUCER_SNAPSHOT)
    except RemoteObjectNotFoundError:
        snapshot = None  # copied without producer state (no idempotent producer wrote)
    return RemoteAuxState(segment, segment.end_offset + 1, epochs, snapshot)
