"""Leader epoch rules: fencing requests, and finding where two logs diverge.

Every leader change bumps the partition's leader epoch, and every batch
carries the epoch of the leader that wrote it.  Two uses follow, both pure
functions here so they are tested without logs:

* Fencing.  A request that names the epoch it expects (Fetch's and
  OffsetForLeaderEpoch's ``current_leader_epoch``; -1 means "not given") is
  refused with FENCED_LEADER_EPOCH when it is older than ours (the sender is
  behind) and UNKNOWN_LEADER_EPOCH when it is newer (we are behind and the
  sender should retry once we catch up).
* Divergence.  A follower says which epoch wrote its last data
  (``last_fetched_epoch``).  The leader looks that epoch up in its own epoch
  cache: if the leader's largest epoch at or below it is smaller, or ended
  before the follower's log end, the follower holds data the leader does not
  and must truncate (the leader answers ``diverging_epoch``).  The follower
  then looks the leader's answer up in *its* cache to pick the truncation
  offset (Kafka's ``getOffsetTruncationState``); when it does not know the
  leader's epoch it truncates to the end of its own epoch just below it and
  asks again, one step per round trip, until both agree.
"""

from __future__ import annotations

from typing import NamedTuple

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.leader_epoch_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
)

__all__ = [
    "NO_EPOCH",
    "OffsetTruncation",
    "check_current_leader_epoch",
    "diverging_epoch",
    "offset_truncation",
]

NO_EPOCH = -1
"""A ``current_leader_epoch`` / ``last_fetched_epoch`` the sender did not give."""


def check_current_leader_epoch(local_epoch: int, requested_epoch: int) -> ErrorCode:
    """Kafka's ``checkCurrentLeaderEpoch``."""
    if requested_epoch == NO_EPOCH:
        return ErrorCode.NONE
    if requested_epoch < local_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if requested_epoch > local_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NONE


def diverging_epoch(
    epoch_end: EpochEndOffset,
    last_fetched_epoch: int,
    fetch_offset: int,
    log_start_offset: int,
) -> EpochEndOffset | None:
    """The leader's side of a follower fetch with ``last_fetched_epoch``.

    ``epoch_end`` is the leader's ``end_offset_for_epoch(last_fetched_epoch)``.
    Returns the (epoch, end offset) to send back as ``diverging_epoch``, or None
    when the follower's log is a prefix of ours and the read may go ahead.
    Raises OFFSET_OUT_OF_RANGE when the epoch is unknown to the leader or the
    fetch offset is below its log start (the follower then resets from the
    leader's offsets), as Kafka's ``Partition.readRecords`` does."""
    if epoch_end.epoch == UNDEFINED_EPOCH or epoch_end.end_offset == UNDEFINED_EPOCH_OFFSET:
        raise KafkaError(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            f"the end offset of last fetched epoch {last_fetched_epoch} is unknown",
        )
    if fetch_offset < log_start_offset:
        raise KafkaError(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            f"fetch offset {fetch_offset} is below the log start offset {log_start_offset}",
        )
    if epoch_end.epoch < last_fetched_epoch or epoch_end.end_offset < fetch_offset:
        return epoch_end
    return None


class OffsetTruncation(NamedTuple):
    """Where a follower truncates, and whether its log then matches the leader's
    (False: truncate there and ask the leader again)."""

    offset: int
    completed: bool


def offset_truncation(
    leader: EpochEndOffset,
    follower_for_leader_epoch: EpochEndOffset,
    follower_end_offset: int,
    fetch_offset: int,
) -> OffsetTruncation:
    """The follower's side: ``leader`` is the leader's answer (a diverging epoch
    or an OffsetForLeaderEpoch result), ``follower_for_leader_epoch`` the
    follower's own ``end_offset_for_epoch(leader.epoch)``.  ``fetch_offset`` is
    where the follower would fetch from without truncating (its high watermark
    when it has no epochs).  Kafka's ``getOffsetTruncationState``."""
    if leader.end_offset == UNDEFINED_EPOCH_OFFSET:
        # The leader knows nothing of the epoch: keep what is below the fetch offset.
        return OffsetTruncation(fetch_offset, True)
    if leader.epoch == UNDEFINED_EPOCH:
        return OffsetTruncation(min(leader.end_offset, follower_end_offset), True)
    if follower_for_leader_epoch.epoch == UNDEFINED_EPOCH:
        # The follower has no epoch at or below the leader's (data written before
        # epochs were tracked, or none): the leader's end offset is safe.
        return OffsetTruncation(min(leader.end_offset, follower_end_offset), True)
    if follower_for_leader_epoch.epoch != leader.epoch:
        # We never had the leader's epoch: cut to the end of our largest epoch
        # below it and ask again with that epoch.
        return OffsetTruncation(
            min(follower_for_leader_epoch.end_offset, follower_end_offset), False
        )
    return OffsetTruncation(
        min(follower_for_leader_epoch.end_offset, leader.end_offset, follower_end_offset), True
    )
