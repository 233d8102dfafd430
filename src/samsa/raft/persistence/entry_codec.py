"""Raft entries as Kafka RecordBatches: the bytes of the ``__cluster_metadata-0`` log.

Kafka's layout, so that Kafka's tools read our metadata log and we read theirs:

* Data payloads: a run of entries of one epoch appended together is one
  RecordBatch v2 (no compression, CreateTime, no producer id), base offset = the
  first entry's offset, ``partition_leader_epoch`` = the epoch; each record has a
  null key and the payload as its value.  A run is split into batches of at most
  ``max_batch_bytes`` (Kafka's KafkaRaftClient writes batches of at most 8 KiB);
  a payload larger than that gets a batch of its own.
* ``LeaderChange``: a control batch of one LEADER_CHANGE record (LeaderChangeMessage
  v0: leader id, voter ids, granting voter ids).
* ``Voters``: a control batch of one KRAFT_VOTERS record (VotersRecord v0: each
  voter's id, directory id, endpoints and supported kraft.version range), as
  Kafka's leader writes it when a voter is added or removed.  Kafka puts a
  KRaftVersionRecord next to a VotersRecord only in a snapshot's header and in a
  leader's first batch when it writes the bootstrap voter set to the log; a
  ``Voters`` entry here stands alone, so none is written.

Reading gives one entry per record, so offsets stay dense.  A control record
Raft does not interpret (a KRaftVersionRecord in a log written by Kafka, a type
from a newer Kafka) still holds its offset: it reads back as ``SKIPPED_CONTROL``,
a LeaderChange with no leader and no voters.  It is a control entry, so the
state machine above skips it, and reading a LeaderChange changes nothing in Raft;
if replicated on, it is written as such a LeaderChange.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.batches.record_batch import (
    BatchHeader,
    BufferLike,
    iter_batches,
    validate_batch,
)
from samsa.protocol.batches.record_builder import MAX_RECORD_OVERHEAD, RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_batch
from samsa.protocol.internal_records.kraft_control import (
    UnknownControlRecordType,
    control_batch,
    decode_control_record,
)
from samsa.raft.records import Endpoint, Entry, LeaderChange, Payload, Voters
from samsa.raft.voters import VoterNode, VoterSet

__all__ = [
    "DEFAULT_MAX_BATCH_BYTES",
    "SKIPPED_CONTROL",
    "ReadEntries",
    "batch_prefix",
    "decode_entries",
    "encode_entries",
    "encode_payloads",
    "iter_whole_batches",
    "voter_set_from_record",
    "voters_record",
    "whole_batches_between",
]

DEFAULT_MAX_BATCH_BYTES = 8 * 1024
"""Kafka's KafkaRaftClient.MAX_BATCH_SIZE_BYTES."""

SKIPPED_CONTROL = LeaderChange(leader_id=-1, voters=())
"""What a control record Raft does not interpret reads back as (see the module doc)."""

# The kraft.version range a voter advertises in a VotersRecord: Samsa speaks
# KIP-853's kraft.version 1 and reads logs of version 0.
_KRAFT_VERSION_RANGE = {"min_supported_version": 0, "max_supported_version": 1}
_NO_DIRECTORY_ID = bytes(16)  # Kafka's Uuid.ZERO_UUID: a voter without a directory id


def encode_payloads(
    payloads: Sequence[Payload],
    *,
    base_offset: int,
    epoch: int,
    timestamp_ms: int,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
) -> bytearray:
    """The batches holding ``payloads`` at offsets from ``base_offset``, all of ``epoch``."""
    out = bytearray()
    builder: RecordBatchBuilder | None = None
    offset = base_offset
    for payload in payloads:
        if isinstance(payload, bytes):
            if builder is not None and (
                builder.estimated_size() + len(payload) + MAX_RECORD_OVERHEAD > max_batch_bytes
            ):
                out += builder.build()
                builder = None
            if builder is None:
                builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=epoch)
            builder.append(timestamp_ms, None, payload)
        else:
            if builder is not None:
                out += builder.build()
                builder = None
            out += control_batch(
                [_control_record(payload)],
                timestamp_ms=timestamp_ms,
                base_offset=offset,
                partition_leader_epoch=epoch,
            )
        offset += 1
    if builder is not None:
        out += builder.build()
    return out


def encode_entries(
    entries: Sequence[Entry], *, timestamp_ms: int, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
) -> bytearray:
    """The batches of dense ``entries``: one run of batches per run of equal epochs."""
    out = bytearray()
    start = 0
    for index in range(1, len(entries) + 1):
        if index == len(entries) or entries[index].epoch != entries[start].epoch:
            run = entries[start:index]
            out += encode_payloads(
                [entry.payload for entry in run],
                base_offset=run[0].offset,
                epoch=run[0].epoch,
                timestamp_ms=timestamp_ms,
                max_batch_bytes=max_batch_bytes,
            )
            start = index
    return out


def decode_entries(
    buf: BufferLike,
    from_offset: int = 0,
    *,
    control_only: bool = False,
    until_offset: int | None = None,
) -> tuple[list[Entry], int]:
    """Entries at offsets >= ``from_offset`` in the whole batches of ``buf``, and the
    offset after the last whole batch decoded (``from_offset`` if there is none).
    Batches starting at ``until_offset`` or later are left undecoded: a read
    of a few entries gets bytes for about twice as many.

    Every batch's CRC is checked: KafkaError(CORRUPT_MESSAGE) if one is damaged,
    DecodeError if its records do not parse.  ``control_only``: the records of
    data batches are not decoded (Raft's own scan for voter changes at start,
    which would otherwise decode the whole metadata log once more).
    """
    data = buf if isinstance(buf, bytes) else bytes(buf)
    entries: list[Entry] = []
    append = entries.append
    next_offset = from_offset
    for pos, header in iter_batches(data):
        if until_offset is not None and header.base_offset >= until_offset:
            break
        validate_batch(data, pos, header)
        next_offset = max(next_offset, header.next_offset)
        if header.next_offset <= from_offset:
            continue
        if control_only and not header.is_control:
            continue
        epoch = header.partition_leader_epoch
        records = decode_batch(data, pos, header)
        if header.is_control:
            for record in records:
                if record.offset >= from_offset:
                    append(Entry(record.offset, epoch, _control_payload(record.key, record.value)))
        else:
            for record in records:
                if record.offset >= from_offset:
                    value = record.value
                    append(Entry(record.offset, epoch, b"" if value is None else value))
    return entries, next_offset


def batch_prefix(buf: BufferLike, pos: int, header: BatchHeader, end_offset: int) -> bytearray:
    """A batch holding the records of the batch at ``pos`` below ``end_offset``.

    Records keep their offsets, timestamps, keys, values and headers; the batch
    keeps its epoch, control flag, codec and producer fields.  This is how a log
    is truncated inside a batch: Raft's divergence points need not fall on the
    batch boundaries of this node's log.
    """
    records = [r for r in decode_batch(buf, pos, header) if r.offset < end_offset]
    if not records:
        raise ValueError(f"no record of the batch at {header.base_offset} is below {end_offset}")
    builder = RecordBatchBuilder(
        header.compression,
        base_offset=header.base_offset,
        timestamp_type=header.timestamp_type,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=header.is_transactional,
        is_control=header.is_control,
        partition_leader_epoch=header.partition_leader_epoch,
    )
    for record in records:
        if record.offset != header.base_offset + builder.record_count:
            raise ValueError(f"batch at {header.base_offset} has a gap before {record.offset}")
        builder.append(record.timestamp, record.key, record.value, record.headers)
    return builder.build()


# -- control records -----------------------------------------------------------------


def _control_record(payload: LeaderChange | Voters) -> tuple[str, dict[str, Any]]:
    if isinstance(payload, LeaderChange):
        return "LEADER_CHANGE", {
            "leader_id": payload.leader_id,
            "voters": [{"voter_id": voter_id} for voter_id in payload.voters],
            "granting_voters": [{"voter_id": voter_id} for voter_id in payload.granting_voters],
        }
    return "KRAFT_VOTERS", voters_record(payload.voter_set)


def _control_payload(key: bytes | None, value: bytes | None) -> Payload:
    try:
        kind, body = decode_control_record(key, value)
    except UnknownControlRecordType:
        return SKIPPED_CONTROL
    if kind == "LEADER_CHANGE":
        return LeaderChange(
            body["leader_id"],
            tuple(voter["voter_id"] for voter in body["voters"]),
            tuple(voter["voter_id"] for voter in body["granting_voters"]),
        )
    if kind == "KRAFT_VOTERS":
        return Voters(voter_set_from_record(body))
    return SKIPPED_CONTROL


def voters_record(voter_set: VoterSet) -> dict[str, Any]:
    """The body of a VotersRecord (Kafka's VoterSet.toVotersRecord)."""
    return {
        "voters": [
            {
                "voter_id": node.node_id,
                "voter_directory_id": _NO_DIRECTORY_ID
                if node.directory_id is None
                else node.directory_id.bytes,
                "endpoints": [
                    {"name": e.listener, "host": e.host, "port": e.port} for e in node.endpoints
                ],
                "kraft_version_feature": dict(_KRAFT_VERSION_RANGE),
            }
            for node in voter_set
        ]
    }


def voter_set_from_record(body: dict[str, Any]) -> VoterSet:
    """The voter set of a VotersRecord body; a zero directory id means none."""
    try:
        return VoterSet(tuple(_voter_node(voter) for voter in body["voters"]))
    except ValueError as e:
        raise DecodeError(f"bad VotersRecord: {e}") from None


def _voter_node(voter: dict[str, Any]) -> VoterNode:
    directory = bytes(voter["voter_directory_id"])
    return VoterNode(
        voter["voter_id"],
        None if directory == _NO_DIRECTORY_ID else uuid.UUID(bytes=directory),
        tuple(Endpoint(e["name"], e["host"], e["port"]) for e in voter["endpoints"]),
    )


def iter_whole_batches(buf: BufferLike) -> Iterator[tuple[int, BatchHeader]]:
    """``iter_batches`` that also checks every CRC and refuses trailing bytes."""
    end = 0
    for pos, header in iter_batches(buf):
        validate_batch(buf, pos, header)
        end = pos + header.size
        yield pos, header
    if end != len(buf):
        raise DecodeError(f"{len(buf) - end} bytes after the last whole batch")


class ReadEntries(list[Entry]):
    """Entries read from a log, with the stored batches that hold exactly them
    (``raw``) when the read ended on batch boundaries: the leader sends those
    bytes to a follower as they are instead of encoding the entries again
    (encoding 4,000 leadership changes held the controller's loop ~0.5 s per
    Raft fetch on a loaded machine)."""

    __slots__ = ("raw",)

    def __init__(self, entries: list[Entry], raw: bytes | None) -> None:
        super().__init__(entries)
        self.raw = raw


def whole_batches_between(buf: BufferLike, from_offset: int, end_offset: int) -> bytes | None:
    """The bytes of ``buf``'s batches holding exactly offsets [from_offset,
    end_offset); None if its batches do not start at ``from_offset`` or end
    there (a read that began or stopped inside a batch)."""
    for pos, header in iter_batches(buf):
        if pos == 0 and header.base_offset != from_offset:
            return None
        last = header.base_offset + header.last_offset_delta
        if last + 1 == end_offset:
            return bytes(buf[: pos + header.size])
        if last + 1 > end_offset:
            return None
    return None
