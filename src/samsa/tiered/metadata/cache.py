"""One partition's remote segments, indexed by leader epoch: Kafka's RemoteLogMetadataCache.

Sans-I/O state, fed by replaying ``__remote_log_metadata`` (``add_copy_in_progress``
for a segment's metadata, ``update`` for its state changes) and read by the
remote log manager.  What each read sees, by segment state (Kafka's table):

======================================  =======  ========  =============  ==============
read                                    COPY_    COPY_     DELETE_        DELETE_
                                        STARTED  FINISHED  STARTED        FINISHED
======================================  =======  ========  =============  ==============
``segment_for(epoch, offset)``          no       yes       no             no
``list_segments(epoch)``, ``list_all``  yes      yes       yes            no (forgotten)
======================================  =======  ========  =============  ==============

Per epoch, an ``_EpochState`` maps the start offset (of the epoch within the
segment) of each finished segment to its id, and keeps the other segments of
that epoch as *unreferenced*: still copying, being deleted, or superseded by
a later copy of the same offsets.  A new leader that re-copies offsets a
deposed leader had copied (the deposed one lagged, or its copy was cut short)
supersedes the old segments: those whose range within the epoch starts at or
after the new one and whose end is not beyond it become unreferenced, so reads
find the new copy and the expiration task can still list and delete the old.

Invalid transitions (see ``RemoteLogSegmentState.is_valid_transition``) are
dropped with an error log, as Kafka drops them: the topic is replayed from the
start after a restart, and a duplicate or reordered event must not stop that.
Not thread-safe: one owner (the metadata consumer's thread) applies events; a
reader on another thread takes the owner's lock.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterator

from samsa.tiered.metadata.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
)

__all__ = ["RemoteLogMetadataCache", "RemoteResourceNotFoundError"]

logger = logging.getLogger(__name__)

S = RemoteLogSegmentState


class RemoteResourceNotFoundError(KeyError):
    """An update for a segment whose metadata was never seen (Kafka's
    RemoteResourceNotFoundException)."""


class _EpochState:
    """Kafka's RemoteLogLeaderEpochState: one epoch's finished and other segments."""

    __slots__ = ("by_start", "highest_offset", "starts", "unreferenced")

    def __init__(self) -> None:
        self.starts: list[int] = []  # sorted start offsets of finished segments
        self.by_start: dict[int, RemoteLogSegmentId] = {}
        self.unreferenced: set[RemoteLogSegmentId] = set()
        self.highest_offset: int | None = None  # highest offset this epoch has in finished copies

    def copy_started(self, segment_id: RemoteLogSegmentId) -> None:
        self.unreferenced.add(segment_id)

    def copy_finished(
        self, start_offset: int, segment_id: RemoteLogSegmentId, epoch_end_offset: int
    ) -> None:
        # Supersede the finished segments that the new copy covers (see module doc).
        while (
            self.starts
            and self.starts[-1] >= start_offset
            and self.highest_offset is not None
            and self.highest_offset <= epoch_end_offset
        ):
            last = self.starts.pop()
            self.unreferenced.add(self.by_start.pop(last))
        if start_offset not in self.by_start:
            bisect.insort(self.starts, start_offset)
        self.by_start[start_offset] = segment_id
        self.unreferenced.discard(segment_id)
        if self.highest_offset is None or epoch_end_offset > self.highest_offset:
            self.highest_offset = epoch_end_offset

    def delete_started(self, start_offset: int, segment_id: RemoteLogSegmentId) -> None:
        if self.by_start.get(start_offset) == segment_id:
            del self.by_start[start_offset]
            self.starts.remove(start_offset)
        self.unreferenced.add(segment_id)

    def delete_finished(self, segment_id: RemoteLogSegmentId) -> None:
        self.unreferenced.discard(segment_id)

    def floor(self, offset: int) -> RemoteLogSegmentId | None:
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.by_start[self.starts[i]] if i >= 0 else None

    def segment_ids(self) -> list[RemoteLogSegmentId]:
        return [self.by_start[s] for s in self.starts] + list(self.unreferenced)


class RemoteLogMetadataCache:
    """The remote segments of one partition that have not reached DELETE_SEGMENT_FINISHED."""

    def __init__(self) -> None:
        self._by_id: dict[RemoteLogSegmentId, RemoteLogSegmentMetadata] = {}
        self._epochs: dict[int, _EpochState] = {}
        self._initialized = False

    # -- lifecycle --------------------------------------------------------

    def mark_initialized(self) -> None:
        """The replay caught up: reads may be answered, unknown updates are errors."""
        self._initialized = True

    @property
    def initialized(self) -> bool:
        return self._initialized

    # -- events -----------------------------------------------------------

    def add_copy_in_progress(self, metadata: RemoteLogSegmentMetadata) -> None:
        """A segment's copy started (its metadata record, state COPY_SEGMENT_STARTED)."""
        if metadata.state is not S.COPY_SEGMENT_STARTED:
            raise ValueError(
                f"{metadata.segment_id}: expected COPY_SEGMENT_STARTED, got {metadata.state.name}"
            )
        existing = self._by_id.get(metadata.segment_id)
        if not self._transition_ok(existing, metadata.state, metadata.segment_id):
            return
        for epoch in metadata.epochs:
            self._epoch(epoch).copy_started(metadata.segment_id)
        self._by_id[metadata.segment_id] = metadata

    def update(self, update: RemoteLogSegmentMetadataUpdate) -> None:
        """A segment's state changed.  An update for an unknown segment is
        dropped while replaying (its metadata may have been deleted earlier in
        the topic) and raises RemoteResourceNotFoundError afterwards."""
        existing = self._by_id.get(update.segment_id)
        if existing is None:
            if not self._initialized:
                logger.debug("dropping %s: its segment is already gone", update)
                return
            raise RemoteResourceNotFoundError(
                f"no remote log segment metadata for {update.segment_id}"
            )
        if not self._transition_ok(existing, update.state, update.segment_id):
            return
        metadata = existing.with_update(update)
        seg_id = metadata.segment_id
        if update.state is S.COPY_SEGMENT_FINISHED:
            for epoch, start in metadata.segment_leader_epochs:
                end = metadata.epoch_end_offset(epoch)
                self._epoch(epoch).copy_finished(start, seg_id, end)
            self._by_id[seg_id] = metadata
        elif update.state is S.DELETE_SEGMENT_STARTED:
            for epoch, start in metadata.segment_leader_epochs:
                self._epoch(epoch).delete_started(start, seg_id)
            self._by_id[seg_id] = metadata
        elif update.state is S.DELETE_SEGMENT_FINISHED:
            for epoch in metadata.epochs:
                self._epoch(epoch).delete_finished(seg_id)
            del self._by_id[seg_id]

    def _epoch(self, epoch: int) -> _EpochState:
        state = self._epochs.get(epoch)
        if state is None:
            state = self._epochs[epoch] = _EpochState()
        return state

    @staticmethod
    def _transition_ok(
        existing: RemoteLogSegmentMetadata | None,
        target: RemoteLogSegmentState,
        segment_id: RemoteLogSegmentId,
    ) -> bool:
        source = existing.state if existing is not None else None
        if RemoteLogSegmentState.is_valid_transition(source, target):
            return True
        logger.error(
            "remote segment %s can not go from %s to %s; dropping the event",
            segment_id,
            source.name if source is not None else "nothing",
            target.name,
        )
        return False

    # -- reads --------------------------------------------------------------

    def segment_for(self, leader_epoch: int, offset: int) -> RemoteLogSegmentMetadata | None:
        """The finished segment holding ``offset`` written in ``leader_epoch``
        (Kafka's ``remoteLogSegmentMetadata(leaderEpoch, offset)``), or None."""
        state = self._epochs.get(leader_epoch)
        if state is None:
            return None
        segment_id = state.floor(offset)
        if segment_id is None:
            return None
        metadata = self._by_id[segment_id]
        return None if offset > metadata.epoch_end_offset(leader_epoch) else metadata

    def next_segment_with_txn_index(
        self, leader_epoch: int, offset: int
    ) -> RemoteLogSegmentMetadata | None:
        """The first finished segment of ``leader_epoch`` from ``offset`` on whose
        transaction index is not empty (Kafka's ``nextSegmentWithTxnIndex``)."""
        metadata = self.segment_for(leader_epoch, offset)
        while metadata is not None and metadata.txn_index_empty:
            metadata = self.segment_for(leader_epoch, metadata.end_offset + 1)
        return metadata

    def highest_offset_for_epoch(self, leader_epoch: int) -> int | None:
        """The highest offset of ``leader_epoch`` in segments that finished copying
        (whatever happened to them since), or None."""
        state = self._epochs.get(leader_epoch)
        return state.highest_offset if state is not None else None

    def list_segments(self, leader_epoch: int) -> list[RemoteLogSegmentMetadata]:
        """Every known segment with data of ``leader_epoch``, by start offset."""
        state = self._epochs.get(leader_epoch)
        if state is None:
            return []
        return sorted((self._by_id[i] for i in state.segment_ids()), key=lambda m: m.start_offset)

    def list_all(self) -> Iterator[RemoteLogSegmentMetadata]:
        """Every known segment, in no particular order (Kafka's ``listAllRemoteLogSegments``)."""
        return iter(list(self._by_id.values()))

    def get(self, segment_id: RemoteLogSegmentId) -> RemoteLogSegmentMetadata | None:
        return self._by_id.get(segment_id)

    def __len__(self) -> int:
        return len(self._by_id)
