"""The layout of a metadata snapshot file, as Kafka's RecordsSnapshotWriter writes it.

::

    control batch   SnapshotHeaderRecord, then (kraft.version 1) KRaftVersionRecord
                    and VotersRecord: the voter set in force at the snapshot's end
    data batches    the owner's RecordBatches of metadata records, byte for byte
    control batch   SnapshotFooterRecord

Every batch Raft writes here carries the snapshot's epoch as its partition
leader epoch; the header batch starts at offset 0 and the footer follows the
last offset before it, as Kafka numbers a snapshot's records from 0.  The data
batches keep whatever offsets the owner gave them.  A snapshot without a voter
set (a static quorum) is kraft.version 0: the header batch holds the
SnapshotHeaderRecord alone, as Kafka writes it.

Reading accepts what Kafka writes: the leading control batches carry the
header, kraft.version and voters; the last batch must be the footer; every
batch's CRC must check out.  Anything else is a ``SnapshotFormatError``, raised
before a fetched snapshot replaces a log.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.errors import DecodeError, KafkaError
from samsa.protocol.batches.record_batch import BufferLike
from samsa.protocol.batches.record_reader import decode_batch
from samsa.protocol.internal_records.kraft_control import control_batch, decode_control_record
from samsa.raft.persistence.entry_codec import (
    iter_whole_batches,
    voter_set_from_record,
    voters_record,
)
from samsa.raft.voters import VoterSet

__all__ = [
    "SnapshotFormatError",
    "SnapshotLayout",
    "check_snapshot_data",
    "parse_snapshot",
    "snapshot_footer",
    "snapshot_header",
]

_KRAFT_VERSION_WITH_VOTERS = 1


class SnapshotFormatError(ValueError):
    """Bytes that are not a whole, intact snapshot (see the module doc)."""


@dataclass(frozen=True, slots=True)
class SnapshotLayout:
    """Where the parts of a snapshot lie: ``raw[data_start:data_end]`` is the owner's data."""

    voters: VoterSet | None
    last_contained_log_timestamp_ms: int
    data_start: int
    data_end: int


def snapshot_header(
    voters: VoterSet | None, *, epoch: int, timestamp_ms: int, last_contained_log_timestamp_ms: int
) -> bytes:
    """The first batch of a snapshot (see the module doc)."""
    records: list[tuple[str | int, dict[str, object]]] = [
        ("SNAPSHOT_HEADER", {"last_contained_log_timestamp": last_contained_log_timestamp_ms})
    ]
    if voters is not None:
        records.append(("KRAFT_VERSION", {"kraft_version": _KRAFT_VERSION_WITH_VOTERS}))
        records.append(("KRAFT_VOTERS", voters_record(voters)))
    return control_batch(records, timestamp_ms=timestamp_ms, partition_leader_epoch=epoch)


def snapshot_footer(*, epoch: int, timestamp_ms: int, base_offset: int) -> bytes:
    """The last batch of a snapshot."""
    return control_batch(
        [("SNAPSHOT_FOOTER", {})],
        timestamp_ms=timestamp_ms,
        base_offset=base_offset,
        partition_leader_epoch=epoch,
    )


def check_snapshot_data(data: BufferLike) -> int:
    """Check that ``data`` is whole, intact data batches (control records are
    Raft's); return the offset after its last batch (0 when empty)."""
    next_offset = 0
    try:
        for _, header in iter_whole_batches(data):
            if header.is_control:
                raise SnapshotFormatError(
                    f"snapshot data holds a control batch at offset {header.base_offset}"
                )
            next_offset = max(next_offset, header.next_offset)
    except (DecodeError, KafkaError) as e:
        raise SnapshotFormatError(f"snapshot data is not whole record batches: {e}") from None
    return next_offset


def parse_snapshot(raw: BufferLike) -> SnapshotLayout:
    """The parts of a snapshot file; SnapshotFormatError if it is not one."""
    try:
        batches = list(iter_whole_batches(raw))
    except (DecodeError, KafkaError) as e:
        raise SnapshotFormatError(f"not a snapshot: {e}") from None
    if len(batches) < 2:
        raise SnapshotFormatError(f"a snapshot needs a header and a footer, found {len(batches)}")
    try:
        leading = 0
        voters: VoterSet | None = None
        timestamp = -1
        while leading < len(batches) - 1 and batches[leading][1].is_control:
            pos, header = batches[leading]
            for record in decode_batch(raw, pos, header):
                kind, body = decode_control_record(record.key, record.value)
                if leading == 0 and timestamp < 0:
                    if kind != "SNAPSHOT_HEADER":
                        raise SnapshotFormatError(f"first record is {kind}, not SNAPSHOT_HEADER")
                    timestamp = max(0, body["last_contained_log_timestamp"])
                elif kind == "KRAFT_VOTERS":
                    voters = voter_set_from_record(body)
            leading += 1
        if leading == 0:
            raise SnapshotFormatError("the first batch is not a control batch (no header)")
        footer_pos, footer = batches[-1]
        footer_records = decode_batch(raw, footer_pos, footer) if footer.is_control else []
        kinds = [decode_control_record(r.key, r.value)[0] for r in footer_records]
        if kinds[:1] != ["SNAPSHOT_FOOTER"]:
            raise SnapshotFormatError("the last batch is not a SnapshotFooter control batch")
    except DecodeError as e:
        raise SnapshotFormatError(f"bad snapshot control record: {e}") from None
    data_start = batches[leading][0]
    return SnapshotLayout(voters, timestamp, data_start, footer_pos)
