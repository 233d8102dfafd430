"""Turn one partition's fetched bytes into ``ConsumerRecord`` objects, a chunk at a time.

This is the consumer's hot path, so it does not go through the shared
``record_reader`` (which builds an intermediate ``Record`` per record that the
fetcher would then copy).  :class:`PartitionRecords` walks only the 61-byte
batch headers when a response arrives -- enough to know the next fetch offset,
so the next Fetch goes out before any record is decoded -- and decodes records
lazily as ``poll()`` drains them, about as many as it asks for.  Each batch
is opened just before its first records are decoded (``batch_cursor``: CRC,
aborted transactions and control batches dropped, decompression), so damage
surfaces on the ``poll`` that reaches it, with the position exactly after the
last record handed out.

Batches of at least ``record_index.MIN_RECORDS`` records are indexed when
opened: numpy finds every record's fields at once, and each chunk's keys,
values and ``ConsumerRecord`` objects are then built with C-level map/zip
(see ``record_index``; about 1.5x the speed of the loop).  Smaller batches,
and the rare batch the index declines (long varints, damage), go through the
record loop (:func:`_decode_blob`), which builds each ``ConsumerRecord``
directly with ``tuple.__new__``, reads one- and two-byte varints through a
zig-zag table (record length, timestamp delta, offset delta, key and value
lengths of ordinary records never need more), slices key and value out of the
one ``bytes`` object, skips header parsing when the count byte is zero, and
names the exact fault of a damaged record.

Garbage collection: a ConsumerRecord is a tuple subclass, and the cyclic GC
untracks only exact tuples, so every young collection that runs while records
are buffered scans them and promotes them, to be scanned again later.  Hence
the chunks: decoding with the collector paused, about what one ``poll`` hands
out, right after the young collection that the new records would otherwise
trigger, lets an application's records die before a collection sees them.
Headers are tuples, the shared ``()`` when there are none (as aiokafka hands
them out), not a fresh list per record.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from samsa.client.consumer.fetch.aborted import AbortedTransactions
from samsa.client.consumer.fetch.batch_cursor import BatchCursor, complete_batches, open_batch
from samsa.client.consumer.fetch.record_index import records_between
from samsa.client.consumer.records import ConsumerRecord
from samsa.client.metadata import TopicPartition
from samsa.errors import DecodeError, SamsaError
from samsa.protocol.batches.record_batch import BatchHeader
from samsa.protocol.batches.record_reader import _read_headers
from samsa.protocol.primitives import read_varint

__all__ = ["PartitionRecords"]

Deserializer = Callable[[bytes | None], Any]
Headers = tuple[tuple[str, bytes | None], ...]


# Zig-zag values of one- and two-byte varints in one table.  A one-byte varint
# b (< 0x80) is entry b.  A two-byte varint (b >= 0x80, then c < 0x80) has the
# payload ``(b - 0x80) | c << 7`` and is entry ``b + (c << 7)``, i.e. payload +
# 0x80: the indexes never overlap, and the continuation bit needs no masking.
_PAYLOAD_ZIGZAG = [(u >> 1) ^ -(u & 1) for u in range(1 << 14)]
_ZIGZAG = _PAYLOAD_ZIGZAG[:0x80] + _PAYLOAD_ZIGZAG

_new_record: Any = tuple.__new__  # ConsumerRecord(...) runs a Python-level __new__
# Fewer records per chunk would cost more in per-chunk work than GC saves.
_MIN_CHUNK = 64


class PartitionRecords:
    """The not yet handed out part of one partition's fetched bytes.

    ``next_offset`` (known at construction) is where the next fetch starts:
    past the last complete batch, control batches included.
    """

    __slots__ = (
        "_aborted_all",
        "_batches",
        "_check_crcs",
        "_cursor",
        "_data",
        "_error",
        "_fetch_offset",
        "_index",
        "_kd",
        "_next_batch",
        "_records",
        "_transactions",
        "_vd",
        "epoch",
        "next_offset",
        "tp",
    )

    def __init__(
        self,
        tp: TopicPartition,
        data: bytes | memoryview,
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
        self._aborted_all = tuple(aborted)  # (first offset, producer id)
        self._transactions = AbortedTransactions(aborted)  # consumed as batches open
        self._kd = key_deserializer
        self._vd = value_deserializer
        self._batches, self.next_offset = complete_batches(data, fetch_offset)
        self._next_batch = 0
        self._cursor: BatchCursor | None = None
        self._records: list[ConsumerRecord] = []
        self._index = 0
        self._error: SamsaError | None = None

    def raw(
        self,
    ) -> tuple[bytes | memoryview, list[tuple[int, BatchHeader]], tuple[tuple[int, int], ...]]:
        """The fetched bytes, their complete batches and the aborted transactions, for the columnar path."""
        return self._data, self._batches, self._aborted_all

    def skip_to(self, offset: int) -> None:
        """Hand out only records from ``offset`` on, decoding again from the first batch.

        Called when the columnar path (``poll_arrow``) has handed out the
        records before ``offset``, so a later ``poll()`` continues after them.
        """
        self._fetch_offset = offset
        self._transactions = AbortedTransactions(self._aborted_all)
        self._next_batch = 0
        self._cursor = None
        self._records = []
        self._index = 0
        self._error = None

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
                    if not self._decode_next(max_records - len(out)):
                        return out, True
                except SamsaError as exc:
                    if not out:
                        raise
                    self._error = exc
                    return out, False

    def _more(self) -> bool:
        return self._cursor is not None or self._next_batch < len(self._batches)

    def _decode_next(self, want: int) -> bool:
        """Decode the next records (about ``want``); False when no batch is left."""
        while True:
            cursor = self._cursor
            if cursor is None:
                if self._next_batch >= len(self._batches):
                    self._records, self._index = [], 0
                    return False
                pos, header = self._batches[self._next_batch]
                self._next_batch += 1
                data = self._data
                if not isinstance(data, bytes):
                    # Records are sliced out as bytes; the columnar path never needs this copy.
                    data = self._data = bytes(data)
                cursor = self._cursor = open_batch(
                    data, pos, header, self._check_crcs, self._transactions
                )
                if cursor is None:
                    continue
            records = self._decode_chunk(cursor, max(want, _MIN_CHUNK))
            if records:
                self._records, self._index = records, 0
                return True

    def _decode_chunk(self, cursor: BatchCursor, want: int) -> list[ConsumerRecord]:
        """The batch's next ``want`` records (fewer at its end), as ConsumerRecords.

        The collector is paused while they are built, and the young collection
        they would trigger runs first (see the module docstring: 3-6 % of
        consuming).
        """
        count = min(cursor.left, want)
        gc_enabled = gc.isenabled()
        if gc_enabled:
            threshold = gc.get_threshold()[0]
            if threshold and gc.get_count()[0] + count > threshold:
                gc.collect(0)
            gc.disable()
        topic, partition = self.tp
        index = cursor.index
        try:
            if index is not None:
                taken = cursor.taken
                records = records_between(
                    index,
                    cursor.data,
                    taken,
                    taken + count,
                    (
                        ConsumerRecord,
                        topic,
                        partition,
                        cursor.timestamp_type,
                        cursor.fixed_timestamp,
                        cursor.leader_epoch,
                    ),
                )
                # The index checked that the records fill the batch exactly.
                pos = cursor.end if count == cursor.left else cursor.pos
            else:
                records, pos = _decode_blob(
                    cursor.data,
                    cursor.pos,
                    count,
                    cursor.base_offset,
                    cursor.base_timestamp,
                    cursor.fixed_timestamp,
                    (topic, partition),
                    cursor.timestamp_type,
                    cursor.leader_epoch,
                )
        finally:
            if gc_enabled:
                gc.enable()
        if cursor.advance(pos, count):
            self._cursor = None
            cursor.check_filled()
        if cursor.base_offset < self._fetch_offset:
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
    count: int,
    base_offset: int,
    base_timestamp: int,
    fixed_timestamp: int | None,
    where: tuple[str, int],
    timestamp_type: int,
    leader_epoch: int | None,
) -> tuple[list[ConsumerRecord], int]:
    """Decode *count* records from ``data[pos:]`` into ConsumerRecords; returns them and the end.

    Deliberately one flat loop with the varint reads written out: a helper
    call per field would cost more than the field itself.
    """
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
    return records, pos
