"""Cross-check the record format against kafka-python's independent implementation.

kafka-python's snappy support needs python-snappy, which is not installed; a
shim over cramjam's raw snappy functions lets its own xerial framing code run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cramjam
import kafka.codec
import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from samsa.protocol.records import (
    Compression,
    RecordBatchBuilder,
    decode_records,
    read_batch_header,
    validate_batch,
)

Rec = tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


class _SnappyShim:
    @staticmethod
    def compress(data: bytes) -> bytes:
        return bytes(cramjam.snappy.compress_raw(data))

    @staticmethod
    def decompress(data: bytes) -> bytes:
        return bytes(cramjam.snappy.decompress_raw(data))


@pytest.fixture(autouse=True)
def kafka_python_snappy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if not kafka.codec.has_snappy():
        monkeypatch.setattr(kafka.codec, "snappy", _SnappyShim)
    yield


def sample_records(n: int) -> list[Rec]:
    out: list[Rec] = []
    for i in range(n):
        key = None if i % 3 == 0 else f"key-{i}".encode()
        value = None if i % 7 == 5 else (f"value {i} " * (1 + i % 20)).encode()
        headers: list[tuple[str, bytes | None]] = []
        if i % 4 == 1:
            headers = [("trace", f"t{i}".encode()), ("nul", None), ("ünï", b"")]
        out.append((1_700_000_000_000 + i * 3 - (i % 5) * 7, key, value, headers))
    return out


def build_kafka_python(codec: Compression, records: list[Rec], **producer: Any) -> bytes:
    builder = DefaultRecordBatchBuilder(
        2,
        int(codec),
        producer.get("is_transactional", False),
        producer.get("producer_id", -1),
        producer.get("producer_epoch", -1),
        producer.get("base_sequence", -1),
        10**9,
    )
    for offset, (ts, key, value, headers) in enumerate(records):
        assert builder.append(offset, ts, key, value, headers) is not None
    return bytes(builder.build())


def build_samsa(codec: Compression, records: list[Rec], **producer: Any) -> bytes:
    builder = RecordBatchBuilder(codec, batch_size=10**9, **producer)
    for ts, key, value, headers in records:
        builder.append(ts, key, value, headers)
    return builder.build()


def read_kafka_python(data: bytes) -> list[Rec]:
    batch = MemoryRecords(data).next_batch()
    assert batch.validate_crc()
    batch = MemoryRecords(data).next_batch()
    return [(r.timestamp, r.key, r.value, list(r.headers)) for r in batch]


def read_samsa(data: bytes) -> list[Rec]:
    ((_, records),) = decode_records(data)
    assert [r.offset for r in records] == list(range(len(records)))
    return [(r.timestamp, r.key, r.value, r.headers) for r in records]


CODECS = list(Compression)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("n", [1, 17, 1_000])
def test_kafka_python_batches_decode_with_samsa(codec: Compression, n: int) -> None:
    records = sample_records(n)
    data = build_kafka_python(codec, records)
    header = read_batch_header(data)
    validate_batch(data, 0, header)
    if n > 1:  # kafka-python sends uncompressed when compression does not pay
        assert header.compression is codec
    assert read_samsa(data) == records


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("n", [1, 17, 1_000])
def test_samsa_batches_decode_with_kafka_python(codec: Compression, n: int) -> None:
    records = sample_records(n)
    data = build_samsa(codec, records)
    assert read_kafka_python(data) == records


def test_uncompressed_bytes_and_crc_match_kafka_python() -> None:
    records = sample_records(300)
    producer = {"producer_id": 4242, "producer_epoch": 3, "base_sequence": 17}
    ours = build_samsa(Compression.NONE, records, **producer)
    theirs = build_kafka_python(Compression.NONE, records, **producer)
    assert read_batch_header(ours).crc == read_batch_header(theirs).crc
    # Identical except the partition leader epoch (we write -1 like the Java client).
    assert ours[:12] == theirs[:12]
    assert ours[16:] == theirs[16:]


def test_transactional_header_matches_kafka_python() -> None:
    producer = {"producer_id": 1, "producer_epoch": 0, "base_sequence": 0, "is_transactional": True}
    ours = read_batch_header(build_samsa(Compression.NONE, sample_records(3), **producer))
    theirs = read_batch_header(build_kafka_python(Compression.NONE, sample_records(3), **producer))
    assert ours.attributes == theirs.attributes
    assert ours.crc == theirs.crc


def test_multi_batch_fetch_blob_with_truncated_tail() -> None:
    blob = b"".join(build_kafka_python(codec, sample_records(10 + int(codec))) for codec in CODECS)
    full = [len(records) for _, records in decode_records(blob)]
    assert full == [10, 11, 12, 13, 14]
    assert [len(r) for _, r in decode_records(blob[:-1])] == full[:-1]
    assert [len(r) for _, r in decode_records(memoryview(blob)[:-1])] == full[:-1]
