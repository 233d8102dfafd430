"""The producer's bulk encoder writes the same bytes as RecordBatchBuilder, and batches decode."""

from __future__ import annotations

import random

from samsa.client.producer.batch import ProducerBatch
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_columns import encode_records
from samsa.protocol.batches.record_reader import decode_records


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
    batch = ProducerBatch(("t", 0), 1000, 0, 0)
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


def _builder_body(
    timestamps: list[int], values: list[bytes | None], keys: dict[int, bytes] | None = None
) -> bytes:
    builder = RecordBatchBuilder(batch_size=1 << 40)
    for i, (ts, value) in enumerate(zip(timestamps, values, strict=True)):
        builder.append(ts, (keys or {}).get(i), value, None)
    return bytes(builder._buf)


def _check(timestamps: list[int], values: list[bytes | None], keys: dict[int, bytes]) -> None:
    extras = {i: (k, None) for i, k in keys.items()}
    body, max_ts = encode_records(timestamps, values, extras)
    assert body == _builder_body(timestamps, values, keys)
    assert max_ts == max(timestamps)


def test_keyless_runs_across_offset_delta_widths_equal_the_builder() -> None:
    """Runs of one timestamp take the table path; its boundaries are 64, 8192 and 16384."""
    base = 1_700_000_000_000
    for n in (1, 7, 8, 9, 63, 64, 65, 200, 8191, 8192, 8193, 17_000):
        uniform = [b"v" * 100] * n
        varied = [b"w" * (i % 300) for i in range(n)]
        for values in (uniform, varied):
            one_ts = [base] * n
            # runs of 1, 5, 40 and 700 records, one going backwards in time
            steps = [base + d for d in (0, 1, 2, 3, 4, -1)]
            runs = [steps[(i // 700 + i // 40 + i // 5 + i) % 6] for i in range(n)]
            _check(one_ts, values, {})
            _check(runs, values, {})


def test_runs_mixed_with_keys_nulls_big_values_and_far_timestamps() -> None:
    base = 1_700_000_000_000
    n = 3000
    values: list[bytes | None] = [b"x" * 50] * n
    timestamps = [base + i // 500 for i in range(n)]
    _check(timestamps, values, {})
    _check(timestamps, values, {100: b"k", 2999: b""})
    with_null = list(values)
    with_null[1234] = None
    _check(timestamps, with_null, {})
    big = list(values)
    big[10] = b"b" * 20_000
    _check(timestamps, big, {})
    far = [base + (1 << 40) if i >= 2000 else t for i, t in enumerate(timestamps)]
    _check(far, values, {})
    _check([base] * n, [b""] * n, {})
