"""Turn one partition's fetched bytes into ``ConsumerRecord`` objects, a batch at a time.

This is the consumer's hot path, so it does not go through the shared
``record_reader`` (which builds an intermediate ``Record`` per record that the
fetcher would then copy).  :class:`PartitionRecords` walks only the 61-byte
batch headers when a response arrives -- enough to know the next fetch offset,
so the next Fetch goes out before any record is decoded -- and decodes batches
lazily as ``poll()`` drains them.  CRCs are checked per batch (crc32c in C)
just before decoding, so damage surfaces on the ``poll`` that reaches it, with
the position exactly after the last record handed out.

The record loop (:func:`_decode_blob`) builds each ``ConsumerRecord`` directly
with ``tuple.__new__``, reads one- and two-byte varints through a zig-zag
table (record length, timestamp delta, offset delta, key and value lengths of
ordinary records never need more), slices key and value out of the one
``bytes`` object, and skips header parsing when the count byte is zero.

Headers are tuples, the shared ``()`` when there are none (as aiokafka hands
them out), not a fresh list per record: a record then holds only immutable
atoms, so the cyclic GC untracks it the first time it sees it instead of
promoting it and re-scanning it in every older-generation collection while it
sits in a buffer or in the application -- worth 15-25% of consuming.

read_committed: batches of an aborted transaction are dropped from the first
offset the broker names until that producer's ABORT marker, as Kafka's
consumer does.  Control batches are never handed out.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from samsa.client.consumer.records import ConsumerRecord
from samsa.client.metadata import TopicPartition
from samsa.errors import DecodeError, SamsaError
from samsa.protocol.compression import Compression, decompress
from samsa.protocol.primitives import read_varint
from samsa.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CONTROL_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    BatchHeader,
    iter_batches,
    validate_batch,
)
from samsa.protocol.record_reader import _read_headers, decode_batch

__all__ = ["PartitionRecords"]

Deserializer = Callable[[bytes | None], Any]
Headers = tuple[tuple[str, bytes | None], ...]

_ABORT_MARKER = b"\x00\x00\x00\x00"  # control key: version 0, type 0 (ABORT)

# Zig-zag values of one- and two-byte varints in one table.  A one-byte varint
# b (< 0x80) is entry b.  A two-byte varint (b >= 0x80, then c < 0x80) has the
# payload ``(b - 0x80) | c << 7`` and is entry ``b + (c << 7)``, i.e. payload +
# 0x80: the indexes never overlap, and the continuation bit needs no masking.
_PAYLOAD_ZIGZAG = [(u >> 1) ^ -(u & 1) for u in range(1 << 14)]
_ZIGZAG = _PAYLOAD_ZIGZAG[:0x80] + _PAYLOAD_ZIGZAG

_new_record: Any = tuple.__new__  # ConsumerRecord(...) runs a Python-level __new__


class PartitionRecords:
    """The not yet handed out part of one partition's fetched bytes.

    ``next_offset`` (known at construction) is where the next fetch starts:
    past the last complete batch, control batches included.
    """

    __slots__ = (
        "_aborted",
        "_aborting",
        "_batches",
        "_check_crcs",
        "_data",
        "_error",
        "_fetch_offset",
        "_index",
        "_kd",
        "_next_batch",
        "_records",
        "_vd",
        "epoch",
        "next_offset",
        "tp",
    )

    def __init__(
        self,
        tp: TopicPartition,
        data: bytes,
        fetch_offset: int,
        epoch: int,
        *,
        check_crcs: bool,
        aborted: list[tuple[int, int]],
        key_deserializer: Deserializer | None = None,
        value_deserializer: Deserializer | None = None,
    ) -> None:
        self.tp = tp
        self.epoch = epoch
        self._data = data
        self._fetch_offset = fetch_offset
        self._check_crcs = check_crcs
        self._aborted = aborted  # (first offset, producer id), sorted
        self._aborting: set[int] = set()
        self._kd = key_deserializer
        self._vd = value_deserializer
        self._batches = list(iter_batches(data))
        self._next_batch = 0
        self._records: list[ConsumerRecord] = []
        self._index = 0
        self._error: SamsaError | None = None
        next_offset = fetch_offset
        for _pos, header in self._batches:
            last = header.base_offset + header.last_offset_delta + 1
            if last > next_offset:
                next_offset = last
        self.next_offset = next_offset

    def take(self, max_records: int) -> tuple[list[ConsumerRecord], bool]:
        """Up to ``max_records`` records, and whether nothing is left after them.

        A batch that fails to decode raises, but only once the records decoded
        before it have been returned: those are kept and the error is raised
        by the next call, so the position can advance exactly to it.
        """
        if self._error is not None:
            raise self._error
        out: list[ConsumerRecord] = []
        while True:
            records, index = self._records, self._index
            left = len(records) - index
            if left > 0:
                want = max_records - len(out)
                if index == 0 and left <= want and not out:
                    # Hand the decoded list itself over, and forget it: the
                    # caller may extend it with other partitions' records.
                    out = records
                    self._records = []
                else:
                    taken = records[index : index + want]
                    out += taken
                    self._index = index + len(taken)
                if len(out) >= max_records:
                    return out, self._index >= len(records) and not self._more()
            else:
                try:
                    if not self._decode_next():
                        return out, True
                except SamsaError as exc:
                    if not out:
                        raise
                    self._error = exc
                    return out, False

    def _more(self) -> bool:
        return self._next_batch < len(self._batches)

    def _decode_next(self) -> bool:
        """Decode the next batch holding records; False when no batch is left."""
        while self._next_batch < len(self._batches):
            pos, header = self._batches[self._next_batch]
            self._next_batch += 1
            records = self._decode_batch(pos, header)
            if records:
                self._records, self._index = records, 0
                return True
        self._records, self._index = [], 0
        return False

    def _decode_batch(self, pos: int, header: BatchHeader) -> list[ConsumerRecord]:
        data = self._data
        if self._check_crcs:
            validate_batch(data, pos, header)
        attributes = header.attributes
        if self._aborted or self._aborting:
            last = header.base_offset + header.last_offset_delta
            aborted, aborting = self._aborted, self._aborting
            while aborted and aborted[0][0] <= last:
                aborting.add(aborted.pop(0)[1])
            if attributes & TRANSACTIONAL_MASK and header.producer_id in aborting:
                if attributes & CONTROL_MASK:
                    marker = decode_batch(data, pos, header)
                    if marker and marker[0].key == _ABORT_MARKER:
                        aborting.discard(header.producer_id)
                return []
        if attributes & CONTROL_MASK or header.records_count == 0:
            return []
        start = pos + BATCH_HEADER_SIZE
        end = pos + header.batch_length + LOG_OVERHEAD
        codec = attributes & COMPRESSION_MASK
        if codec != Compression.NONE:
            data = decompress(codec, memoryview(data)[start:end])
            start, end = 0, len(data)
        leader_epoch = header.partition_leader_epoch
        topic, partition = self.tp
        # The loop allocates a GC-tracked tuple per record and nothing cyclic.
        # Left on, the collector would run every 700 of them and promote
        # buffered ones through the generations: a third of the decoding
        # time.  Paused, it looks at the batch once (and untracks it).
        gc_enabled = gc.isenabled()
        if gc_enabled:
            gc.disable()
        try:
            records = _decode_blob(
                data,
                start,
                end,
                header.records_count,
                header.base_offset,
                header.base_timestamp,
                header.max_timestamp if attributes & TIMESTAMP_TYPE_MASK else None,
                (topic, partition),
                (attributes >> 3) & 1,
                leader_epoch if leader_epoch >= 0 else None,
            )
        finally:
            if gc_enabled:
                gc.enable()
        if header.base_offset < self._fetch_offset:
            records = [r for r in records if r[2] >= self._fetch_offset]
        if self._kd is not None or self._vd is not None:
            records = self._deserialize(records)
        return records

    def _deserialize(self, records: list[ConsumerRecord]) -> list[ConsumerRecord]:
        kd, vd = self._kd, self._vd
        return [
            _new_record(
                ConsumerRecord,
                (r[0], r[1], r[2], r[3], r[4],
                 kd(r[5]) if kd is not None else r[5],
                 vd(r[6]) if vd is not None else r[6],
                 r[7], r[8]),
            )
            for r in records
        ]  # fmt: skip


def _decode_blob(
    data: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    fixed_timestamp: int | None,
    where: tuple[str, int],
    timestamp_type: int,
    leader_epoch: int | None,
) -> list[ConsumerRecord]:
    """Decode *count* records from ``data[pos:end]`` into ConsumerRecords.

    Deliberately one flat loop with the varint reads written out: a helper
    call per field would cost more than the field itself.
    """
    if count < 0:
        raise DecodeError(f"negative record count {count}")
    if count > end - pos:  # every record takes at least 7 bytes; cheap sanity bound
        raise DecodeError(f"record count {count} does not fit in {end - pos} bytes")
    topic, partition = where
    zz = _ZIGZAG
    new = _new_record
    cls = ConsumerRecord
    records: list[ConsumerRecord] = []
    append = records.append
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                pos += 1
                record_end = pos + zz[b]
            elif (c := data[pos + 1]) < 0x80:
                pos += 2
                record_end = pos + zz[b + (c << 7)]
            else:
                size, pos = read_varint(data, pos)
                record_end = pos + size
            pos += 1  # attributes: unused
            b = data[pos]
            if b < 0x80:
                ts_delta = zz[b]
                pos += 1
            elif (c := data[pos + 1]) < 0x80:
                ts_delta = zz[b + (c << 7)]
                pos += 2
            else:
                ts_delta, pos = read_varint(data, pos)
            b = data[pos]
            if b < 0x80:
                offset_delta = zz[b]
                pos += 1
            elif (c := data[pos + 1]) < 0x80:
                offset_delta = zz[b + (c << 7)]
                pos += 2
            elif (d := data[pos + 2]) < 0x80:
                # Deltas from 8192 on (big uncompressed batches) take 3 bytes.
                u = (b & 0x7F) | (c & 0x7F) << 7 | d << 14
                offset_delta = (u >> 1) ^ -(u & 1)
                pos += 3
            else:
                offset_delta, pos = read_varint(data, pos)
            b = data[pos]
            if b < 0x80:
                size = zz[b]
                pos += 1
            elif (c := data[pos + 1]) < 0x80:
                size = zz[b + (c << 7)]
                pos += 2
            else:
                size, pos = read_varint(data, pos)
            if size >= 0:
                key: bytes | None = data[pos : pos + size]
                pos += size
            elif size == -1:
                key = None
            else:
                raise DecodeError(f"invalid key length {size}")
            b = data[pos]
            if b < 0x80:
                size = zz[b]
                pos += 1
            elif (c := data[pos + 1]) < 0x80:
                size = zz[b + (c << 7)]
                pos += 2
            else:
                size, pos = read_varint(data, pos)
            if size >= 0:
                value: bytes | None = data[pos : pos + size]
                pos += size
            elif size == -1:
                value = None
            else:
                raise DecodeError(f"invalid value length {size}")
            if data[pos] == 0:
                headers: Headers = ()
                pos += 1
            else:
                header_list, pos = _read_headers(data, pos)
                headers = tuple(header_list)
            if pos != record_end:
                raise DecodeError("record length does not match its contents")
            append(
                new(
                    cls,
                    (
                        topic,
                        partition,
                        base_offset + offset_delta,
                        base_timestamp + ts_delta if fixed_timestamp is None else fixed_timestamp,
                        timestamp_type,
                        key,
                        value,
                        headers,
                        leader_epoch,
                    ),
                )
            )
    except IndexError:
        raise DecodeError("truncated record") from None
    if pos != end:
        raise DecodeError(f"{end - pos} bytes after the last of {count} records")
    return records
