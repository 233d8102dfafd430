"""Kafka's ``max.decompressed.message.bytes`` where the broker decompresses a client's batch.

The broker stores batches as they came, but a few paths must look inside a
compressed one: the key check of a compacted topic and the schema id check on
Produce, the log cleaner, and ListOffsets by timestamp.  A small batch can
inflate to gigabytes, so, as Kafka's ``DefaultRecord.readFrom`` refuses a
record whose declared body is larger than the topic's
``max.decompressed.message.bytes`` before it allocates the body, these paths
refuse with INVALID_RECORD:

* a batch whose records blob would inflate past ``records_count`` times the
  largest record (the limit on the body plus its length varint): the
  decompression stops there, holding no more than that (``decompress_records``);
* a record whose declared body is larger than the limit (``check_record_bodies``
  for the walks that do not read each length themselves, ``record_too_large``
  for those that do).

Kafka applies the limit only to compressed batches (an uncompressed one is
already in memory, within ``max.message.bytes``); so do the callers.
"""

from __future__ import annotations

import numpy as np

from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.batches.compression import Compression, DecompressedTooLarge, decompress
from samsa.protocol.batches.record_walk import walk_records
from samsa.protocol.primitives import read_varint

__all__ = [
    "LENGTH_VARINT_MAX",
    "SETTING",
    "check_record_bodies",
    "decompress_records",
    "record_too_large",
    "records_bound",
]

SETTING = "max.decompressed.message.bytes"

LENGTH_VARINT_MAX = 5
"""The framing of a record outside the body the limit counts: its length, a varint of
at most five bytes (Kafka's ``sizeOfBodyInBytes`` is everything after it)."""


def records_bound(records_count: int, max_record_body: int) -> int:
    """The most a batch of ``records_count`` records within the limit can inflate to."""
    return max(records_count, 0) * (max_record_body + LENGTH_VARINT_MAX)


def decompress_records(
    codec: Compression | int,
    data: bytes | bytearray | memoryview,
    records_count: int,
    max_record_body: int,
) -> bytes:
    """The batch's records blob, inflated no further than ``records_bound``; raises
    KafkaError(INVALID_RECORD) past it, CORRUPT_MESSAGE for input that does not inflate."""
    bound = records_bound(records_count, max_record_body)
    try:
        return decompress(codec, data, limit=bound)
    except DecompressedTooLarge:
        records = f"{records_count} record" + ("" if records_count == 1 else "s")
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"a {Compression(codec).name} batch of {records} decompresses to more than "
            f"{bound} bytes, more than {SETTING}={max_record_body} allows per record",
        ) from None


def record_too_large(body_size: int, max_record_body: int) -> KafkaError:
    """INVALID_RECORD in Kafka's words, naming the setting."""
    return KafkaError(
        ErrorCode.INVALID_RECORD,
        f"Invalid record size: {body_size} exceeds the configured maximum record size of "
        f"{max_record_body} ({SETTING}).",
    )


def check_record_bodies(
    data: bytes, start: int, end: int, count: int, max_record_body: int
) -> None:
    """Raise ``record_too_large`` for the first of the ``count`` records of
    ``data[start:end]`` whose declared body is over the limit.  Malformed framing is
    left to the decoder that follows, which names the fault."""
    u8 = np.frombuffer(data, dtype=np.uint8)
    ends = walk_records(data, u8, start, end, count)
    if ends is not None:  # every length varint is one or two bytes
        if not len(ends):
            return
        starts = np.empty_like(ends)
        starts[0] = start
        starts[1:] = ends[:-1]
        bodies = ends - starts - 1 - (u8[starts] >= 0x80)
        over = bodies > max_record_body
        if over.any():
            raise record_too_large(int(bodies[int(over.argmax())]), max_record_body)
        return
    pos = start
    for _ in range(count):
        try:
            length, body = read_varint(data, pos)
        except DecodeError:
            return
        if length > max_record_body:
            raise record_too_large(length, max_record_body)
        if length < 0:
            return
        pos = body + length
