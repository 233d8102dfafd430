"""Batch builders and a manual clock for the storage tests."""

from __future__ import annotations

from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_builder import RecordBatchBuilder


def make_batch(
    count: int = 1,
    *,
    timestamp: int = 1_000,
    timestamps: list[int] | None = None,
    value_size: int = 10,
    compression: Compression = Compression.NONE,
    base_offset: int = 0,
) -> bytearray:
    """One v2 batch of ``count`` records (timestamps default to timestamp + i)."""
    builder = RecordBatchBuilder(compression, base_offset=base_offset)
    stamps = timestamps if timestamps is not None else [timestamp + i for i in range(count)]
    for i, ts in enumerate(stamps):
        builder.append(ts, b"key-%d" % i, b"v" * value_size)
    return bytearray(builder.build())


def make_batches(*batches: bytearray) -> bytearray:
    out = bytearray()
    for b in batches:
        out += b
    return out


class ManualClock:
    """Milliseconds that move only when the test says so."""

    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms
