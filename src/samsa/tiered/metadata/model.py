"""What the remote log metadata says: Kafka's RemoteLogSegmentMetadata and friends.

Plain frozen values, no I/O.  They mirror Kafka's ``storage-api`` types
(``org.apache.kafka.server.log.remote.storage``) field for field, so that the
records Samsa writes to ``__remote_log_metadata`` (see ``records``) carry what
Kafka's TopicBasedRemoteLogMetadataManager carries, and the lineage rules (see
``samsa.tiered.lineage``) can be checked against Kafka's own test cases.

A remote segment's life (Kafka's RemoteLogSegmentState; a self transition is
allowed so that retries and failovers may publish the same state again)::

    COPY_SEGMENT_STARTED --> COPY_SEGMENT_FINISHED
            |                        |
            +-----> DELETE_SEGMENT_STARTED --> DELETE_SEGMENT_FINISHED

Uuids are 16 raw bytes, as everywhere in Samsa; ``uuid_str`` gives Kafka's
base64 spelling for logs and object keys.
"""

from __future__ import annotations

import base64
import enum
import os
from dataclasses import dataclass, field, replace

from samsa.storage.files.leader_epoch_checkpoint import EpochEntry

__all__ = [
    "EpochEntry",
    "RemoteLogMetadata",
    "RemoteLogSegmentId",
    "RemoteLogSegmentMetadata",
    "RemoteLogSegmentMetadataUpdate",
    "RemoteLogSegmentState",
    "RemotePartitionDeleteMetadata",
    "RemotePartitionDeleteState",
    "TopicIdPartition",
    "new_uuid",
    "uuid_str",
]


def uuid_str(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: url-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def new_uuid() -> bytes:
    """A random uuid as Kafka's ``Uuid.randomUuid`` makes one: never the zero
    uuid, and never one whose string starts with ``-`` (a command-line trap)."""
    while True:
        raw = bytearray(os.urandom(16))
        raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
        raw[8] = (raw[8] & 0x3F) | 0x80  # IETF variant
        candidate = bytes(raw)
        if any(candidate) and not uuid_str(candidate).startswith("-"):
            return candidate


class RemoteLogSegmentState(enum.IntEnum):
    """Kafka's RemoteLogSegmentState; the values are the ids on the wire."""

    COPY_SEGMENT_STARTED = 0
    COPY_SEGMENT_FINISHED = 1
    DELETE_SEGMENT_STARTED = 2
    DELETE_SEGMENT_FINISHED = 3

    @staticmethod
    def is_valid_transition(
        source: RemoteLogSegmentState | None, target: RemoteLogSegmentState
    ) -> bool:
        """Kafka's ``isValidTransition``; ``source`` None means "not yet known"."""
        S = RemoteLogSegmentState
        if source is None:
            return target is S.COPY_SEGMENT_STARTED
        if source is target:
            return True
        if source is S.COPY_SEGMENT_STARTED:
            return target in (S.COPY_SEGMENT_FINISHED, S.DELETE_SEGMENT_STARTED)
        if source is S.COPY_SEGMENT_FINISHED:
            return target is S.DELETE_SEGMENT_STARTED
        if source is S.DELETE_SEGMENT_STARTED:
            return target is S.DELETE_SEGMENT_FINISHED
        return False


class RemotePartitionDeleteState(enum.IntEnum):
    """Kafka's RemotePartitionDeleteState: MARKED (by the controller side), then
    STARTED and FINISHED (by the partition's leader); the values are wire ids."""

    DELETE_PARTITION_MARKED = 0
    DELETE_PARTITION_STARTED = 1
    DELETE_PARTITION_FINISHED = 2


@dataclass(frozen=True, slots=True)
class TopicIdPartition:
    """A partition named both ways: the topic id survives a rename-by-recreate,
    the name is what people and logs read."""

    topic_id: bytes
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{uuid_str(self.topic_id)}:{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class RemoteLogSegmentId:
    """A remote segment's identity: its partition and a fresh uuid per copy.

    Each copy attempt gets a new id, so a copy abandoned by a crashed or
    deposed leader never collides with the one that replaces it."""

    topic_id_partition: TopicIdPartition
    id: bytes

    @classmethod
    def generate_new(cls, topic_id_partition: TopicIdPartition) -> RemoteLogSegmentId:
        return cls(topic_id_partition, new_uuid())

    def __str__(self) -> str:
        return f"{self.topic_id_partition}/{uuid_str(self.id)}"


def _sorted_epochs(entries: tuple[EpochEntry, ...]) -> tuple[EpochEntry, ...]:
    return tuple(sorted((EpochEntry(int(e), int(o)) for e, o in entries), key=lambda x: x[0]))


@dataclass(frozen=True, slots=True)
class RemoteLogSegmentMetadata:
    """One remote segment: its offsets, size, the epochs that wrote it, its state.

    ``segment_leader_epochs`` holds (epoch, first offset of that epoch in the
    segment), sorted by epoch, as Kafka's NavigableMap; it is never empty (a
    segment was written by at least one epoch).  ``end_offset`` is inclusive.
    """

    segment_id: RemoteLogSegmentId
    start_offset: int
    end_offset: int
    max_timestamp_ms: int
    broker_id: int
    event_timestamp_ms: int
    segment_size_bytes: int
    segment_leader_epochs: tuple[EpochEntry, ...]
    state: RemoteLogSegmentState = RemoteLogSegmentState.COPY_SEGMENT_STARTED
    custom_metadata: bytes | None = None
    txn_index_empty: bool = False
    _epochs: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        epochs = _sorted_epochs(self.segment_leader_epochs)
        if not epochs:
            raise ValueError(f"{self.segment_id}: segment leader epochs can not be empty")
        if self.start_offset < 0 or self.end_offset < self.start_offset:
            raise ValueError(
                f"{self.segment_id}: offsets {self.start_offset}-{self.end_offset} are not a range"
            )
        object.__setattr__(self, "segment_leader_epochs", epochs)
        object.__setattr__(self, "_epochs", tuple(e for e, _ in epochs))

    @property
    def topic_id_partition(self) -> TopicIdPartition:
        return self.segment_id.topic_id_partition

    @property
    def epochs(self) -> tuple[int, ...]:
        """The epochs of ``segment_leader_epochs``, ascending."""
        return self._epochs

    def epoch_end_offset(self, epoch: int) -> int:
        """The last offset ``epoch`` wrote in this segment: the next epoch's first
        offset minus one, or the segment's end for its last epoch (Kafka's
        ``highestOffsetForEpoch`` within a segment)."""
        epochs = self._epochs
        for i, e in enumerate(epochs):
            if e > epoch:
                return self.segment_leader_epochs[i].start_offset - 1
        return self.end_offset

    def with_update(self, update: RemoteLogSegmentMetadataUpdate) -> RemoteLogSegmentMetadata:
        """Kafka's ``createWithUpdates``: the same segment in the update's state."""
        if update.segment_id != self.segment_id:
            raise ValueError(f"update for {update.segment_id} applied to {self.segment_id}")
        return replace(
            self,
            state=update.state,
            event_timestamp_ms=update.event_timestamp_ms,
            broker_id=update.broker_id,
            custom_metadata=(
                update.custom_metadata
                if update.custom_metadata is not None
                else self.custom_metadata
            ),
        )


@dataclass(frozen=True, slots=True)
class RemoteLogSegmentMetadataUpdate:
    """A state change of a remote segment already announced by its metadata."""

    segment_id: RemoteLogSegmentId
    event_timestamp_ms: int
    state: RemoteLogSegmentState
    broker_id: int
    custom_metadata: bytes | None = None

    def __post_init__(self) -> None:
        if self.state is RemoteLogSegmentState.COPY_SEGMENT_STARTED:
            raise ValueError(
                "an update can not move a segment to COPY_SEGMENT_STARTED: "
                "that state is announced by the segment's metadata itself"
            )

    @property
    def topic_id_partition(self) -> TopicIdPartition:
        return self.segment_id.topic_id_partition


@dataclass(frozen=True, slots=True)
class RemotePartitionDeleteMetadata:
    """A partition's remote data being deleted (topic deletion or KIP-950 disable)."""

    topic_id_partition: TopicIdPartition
    state: RemotePartitionDeleteState
    event_timestamp_ms: int
    broker_id: int


RemoteLogMetadata = (
    RemoteLogSegmentMetadata | RemoteLogSegmentMetadataUpdate | RemotePartitionDeleteMetadata
)
"""Everything ``__remote_log_metadata`` carries (snapshots are a local file's business)."""
