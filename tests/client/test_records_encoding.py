"""The producer's bulk encoder writes the same bytes as RecordBatchBuilder, and batches decode."""

from __future__ import annotations

import random

from samsa.client.producer.batch import ProducerBatch
from samsa.protocol.record_builder import RecordBatchBuilder, encode_records
from samsa.protocol.record_reader import decode_records


def _random_records(
    n: int, seed: int
) -> list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]]:
    rng = random.Random(seed)
    base = 1_700_000_000_000
    out = []
    for _ in range(n):
        key = None if rng.random() < 0.5 else rng.randbytes(rng.randrange(0, 40))
        value = None if rng.random() < 0.1 else rng.randbytes(rng.choice([0, 3, 100, 20_000]))
        headers = None if rng.random() < 0.7 else [("h", b"x"), ("n", None)]
        # mostly increasing, sometimes far ahead or behind the first timestamp
        out.append((base + rng.choice([0, 1, 5, 70_000, -3, 1 << 40]), key, value, headers))
    return out


def test_encode_records_equals_the_record_batch_builder() -> None:
    for seed in range(5):
        records = _random_records(400, seed)
        builder = RecordBatchBuilder(batch_size=1 << 40)
        for record in records:
            builder.append(*record)
        extras = {i: (r[1], r[3]) for i, r in enumerate(records) if r[1] is not None or r[3]}
        body, max_ts = encode_records([r[0] for r in records], [r[2] for r in records], extras)
        assert body == bytes(builder._buf)
        assert max_ts == builder.max_timestamp


def test_producer_batch_bytes_decode_with_keys_headers_and_retried_header() -> None:
    batch = ProducerBatch(("t", 0), bytearray(1000), 0, 0)
    records = [(10, None, b"a"), (12, b"k", b"bb"), (11, None, None)]
    for i, (ts, key, value) in enumerate(records):
        batch.timestamps.append(ts)
        batch.values.append(value)
        if key is not None:
            batch.extras[i] = (key, [("h", b"v")])
    batch.seal()
    first = bytes(batch.records())
    batch.set_producer_state(7, 1, 42)
    again = bytes(batch.records())
    assert len(first) == len(again) and first != again  # only the header changed
    ((header, decoded),) = list(decode_records(again))  # checks the CRC too
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (7, 1, 42)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in decoded] == [
        (i, ts, k, v) for i, (ts, k, v) in enumerate(records)
    ]
    assert list(decoded[1].headers) == [("h", b"v")]
