"""What a remote segment is in the object store, and the store calls that copy, read and delete it.

A copied segment is up to six objects, one per file a Kafka segment has, all
named after the segment's partition, start offset and remote segment id::

    <prefix><topic>-<topic id>/<partition>/<start offset, 20 digits>-<segment id>.<suffix>

    .log                      the records, byte for byte as on local disk
    .index / .timeindex       the offset and time indexes (Kafka's formats)
    .txnindex                 aborted transactions (only when not empty)
    .snapshot                 producer state at the segment's end (when the log has one)
    .leader-epoch-checkpoint  the partition's epochs up to the segment's end

The topic id keeps a topic deleted and re-created under the same name apart;
the segment id (a fresh uuid per copy attempt) keeps two copies of the same
offsets apart, so an object can always be told to belong to a segment the
metadata knows, or to be an orphan of a copy that never finished (a leader
killed mid-upload): ``parse_object_key`` reads the key back for the cleaner.

``RemoteStorageManager`` is Kafka's plugin of that name over a ``RemoteStore``:
copy a segment's files, fetch a byte range of its log or one of its indexes,
delete it.  The log object is written last, so a segment whose log object
exists had all its other objects written first; nothing depends on that for
correctness (the metadata's COPY_SEGMENT_FINISHED is the commit point), but it
makes a half-copied segment easy to spot.
"""

from __future__ import annotations

import asyncio
import enum
import re
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samsa.tiered.metadata.model import (
    RemoteLogSegmentMetadata,
    RemoteLogSegmentState,
    TopicIdPartition,
    uuid_str,
)
from samsa.tiered.store.base import ObjectInfo, RemoteObjectNotFoundError, RemoteStore

__all__ = [
    "LogSegmentData",
    "ParsedKey",
    "RemoteStorageManager",
    "SegmentFile",
    "missing_objects",
    "object_key",
    "orphan_keys",
    "parse_object_key",
    "partition_prefix",
]


class SegmentFile(enum.Enum):
    """The objects of a remote segment, by the suffix of their key."""

    LOG = "log"
    OFFSET_INDEX = "index"
    TIME_INDEX = "timeindex"
    TRANSACTION_INDEX = "txnindex"
    PRODUCER_SNAPSHOT = "snapshot"
    LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"


def partition_prefix(partition: TopicIdPartition) -> str:
    """The key prefix under which all of a partition's objects live."""
    return f"{partition.topic}-{uuid_str(partition.topic_id)}/{partition.partition}/"


def object_key(metadata: RemoteLogSegmentMetadata, kind: SegmentFile) -> str:
    return (
        f"{partition_prefix(metadata.topic_id_partition)}"
        f"{metadata.start_offset:020d}-{uuid_str(metadata.segment_id.id)}.{kind.value}"
    )


@dataclass(frozen=True, slots=True)
class ParsedKey:
    """The parts of an object key written by ``object_key``."""

    topic: str
    topic_id: str
    partition: int
    start_offset: int
    segment_id: str
    kind: SegmentFile


_KEY = re.compile(
    r"^(?P<topic>.+)-(?P<topic_id>[A-Za-z0-9_-]{22})/(?P<partition>\d+)/"
    r"(?P<offset>\d{20})-(?P<segment>[A-Za-z0-9_-]{22})\.(?P<suffix>[a-z-]+)$"
)
_KINDS = {k.value: k for k in SegmentFile}


def parse_object_key(key: str) -> ParsedKey | None:
    """The parts of a segment object's key (relative to the store), or None
    for a key this layout did not write."""
    match = _KEY.match(key)
    if match is None or match["suffix"] not in _KINDS:
        return None
    return ParsedKey(
        match["topic"],
        match["topic_id"],
        int(match["partition"]),
        int(match["offset"]),
        match["segment"],
        _KINDS[match["suffix"]],
    )


@dataclass(frozen=True, slots=True)
class LogSegmentData:
    """The local files of a rolled segment to copy (Kafka's LogSegmentData).

    ``leader_epoch_checkpoint`` is the checkpoint file's text for the epochs
    up to the segment's end (the partition's lineage at that point), built by
    the caller from its leader epoch cache."""

    log: Path
    offset_index: Path
    time_index: Path
    transaction_index: Path | None
    producer_snapshot: Path | None
    leader_epoch_checkpoint: bytes


class RemoteStorageManager:
    """Copies, reads and deletes remote segments through a ``RemoteStore``.

    Stateless beyond the store: safe to share between the copy tasks and the
    readers of every partition.  Errors are the store's (see ``store.base``)."""

    def __init__(self, store: RemoteStore) -> None:
        self.store = store

    async def copy_log_segment_data(
        self, metadata: RemoteLogSegmentMetadata, data: LogSegmentData
    ) -> None:
        """Upload every object of the segment; the log object last."""
        uploads = [
            self.store.put_file(object_key(metadata, SegmentFile.OFFSET_INDEX), data.offset_index),
            self.store.put_file(object_key(metadata, SegmentFile.TIME_INDEX), data.time_index),
            self.store.put_bytes(
                object_key(metadata, SegmentFile.LEADER_EPOCH_CHECKPOINT),
                data.leader_epoch_checkpoint,
            ),
        ]
        if data.transaction_index is not None:
            key = object_key(metadata, SegmentFile.TRANSACTION_INDEX)
            uploads.append(self.store.put_file(key, data.transaction_index))
        if data.producer_snapshot is not None:
            key = object_key(metadata, SegmentFile.PRODUCER_SNAPSHOT)
            uploads.append(self.store.put_file(key, data.producer_snapshot))
        await _all(uploads)
        await self.store.put_file(object_key(metadata, SegmentFile.LOG), data.log)

    async def fetch_log_segment(
        self, metadata: RemoteLogSegmentMetadata, start_position: int, length: int
    ) -> bytes:
        """Up to ``length`` bytes of the segment's records from ``start_position``."""
        return await self.store.get_range(
            object_key(metadata, SegmentFile.LOG), start_position, length
        )

    async def fetch_index(self, metadata: RemoteLogSegmentMetadata, kind: SegmentFile) -> bytes:
        """A whole index object.  A transaction index that was never uploaded
        (the segment had no aborted transaction) reads as empty; any other
        missing object raises ``RemoteObjectNotFoundError``."""
        if kind is SegmentFile.LOG:
            raise ValueError("the log is read by range, with fetch_log_segment")
        try:
            return await self.store.get(object_key(metadata, kind))
        except RemoteObjectNotFoundError:
            if kind is SegmentFile.TRANSACTION_INDEX:
                return b""
            raise

    async def delete_log_segment_data(self, metadata: RemoteLogSegmentMetadata) -> None:
        """Delete every object of the segment; ones already gone are fine, so a
        retried or repeated delete succeeds."""
        await self.store.delete_many([object_key(metadata, kind) for kind in SegmentFile])

    async def list_partition_objects(self, partition: TopicIdPartition) -> list[ObjectInfo]:
        """Every object under the partition's prefix (for orphan cleaning and checks)."""
        return await self.store.list_objects(partition_prefix(partition))


def orphan_keys(objects: Iterable[ObjectInfo], known_segment_ids: Iterable[bytes]) -> list[str]:
    """Keys of segment objects whose segment id the metadata does not know:
    leftovers of copies that never reached COPY_SEGMENT_STARTED in the topic,
    or of segments whose metadata is gone.  Keys of another layout are kept."""
    known = {uuid_str(i) for i in known_segment_ids}
    orphans = []
    for info in objects:
        parsed = parse_object_key(info.key)
        if parsed is not None and parsed.segment_id not in known:
            orphans.append(info.key)
    return orphans


_REQUIRED = (
    SegmentFile.LOG,
    SegmentFile.OFFSET_INDEX,
    SegmentFile.TIME_INDEX,
    SegmentFile.LEADER_EPOCH_CHECKPOINT,
)


def missing_objects(
    segments: Iterable[RemoteLogSegmentMetadata], objects: Iterable[ObjectInfo]
) -> dict[str, list[SegmentFile]]:
    """For each COPY_SEGMENT_FINISHED segment, the objects it must have and
    the store lacks (by segment id string; empty when all are there): with
    ``orphan_keys``, the check that the remote metadata and the bucket agree."""
    present: dict[str, set[SegmentFile]] = {}
    for info in objects:
        parsed = parse_object_key(info.key)
        if parsed is not None:
            present.setdefault(parsed.segment_id, set()).add(parsed.kind)
    missing: dict[str, list[SegmentFile]] = {}
    for segment in segments:
        if segment.state is not RemoteLogSegmentState.COPY_SEGMENT_FINISHED:
            continue
        needed = list(_REQUIRED)
        if not segment.txn_index_empty:
            needed.append(SegmentFile.TRANSACTION_INDEX)
        have = present.get(uuid_str(segment.segment_id.id), set())
        lacking = [kind for kind in needed if kind not in have]
        if lacking:
            missing[uuid_str(segment.segment_id.id)] = lacking
    return missing


async def _all(coroutines: list[Coroutine[Any, Any, None]]) -> None:
    """Run the uploads together; if one fails, the others are cancelled and the
    failure is raised as itself (a fatal one in preference to a retriable one)."""
    try:
        async with asyncio.TaskGroup() as group:
            for coroutine in coroutines:
                group.create_task(coroutine)
    except* Exception as failed:
        errors = failed.exceptions
        fatal = [e for e in errors if not getattr(e, "retriable", False)]
        raise (fatal or list(errors))[0] from None
