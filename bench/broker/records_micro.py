"""Micro benchmark: µs/record to build and to decode 1M 100-byte records.

Not a test.  Batches are closed at ``batch.size`` (16 KiB by default) the way
the producer's accumulator closes them; decoding walks one blob holding all of
them, as a consumer walks a fetch response.  kafka-python's pure-Python
implementation runs side by side as a reference point.

    .venv/bin/python -m bench.broker.records_micro [--records N] [--batch-size B] [--codec none|lz4|...]
"""

from __future__ import annotations

import argparse
import time

from samsa.protocol.records import Compression, RecordBatchBuilder, decode_records

VALUE = b"x" * 100
TIMESTAMP_MS = 1_700_000_000_000


def build_samsa(n: int, batch_size: int, codec: Compression) -> list[bytes]:
    batches: list[bytes] = []
    builder = RecordBatchBuilder(codec, batch_size=batch_size)
    for i in range(n):
        if builder.try_append(TIMESTAMP_MS + (i & 7), None, VALUE) is None:
            batches.append(builder.build())
            builder = RecordBatchBuilder(codec, batch_size=batch_size)
            builder.append(TIMESTAMP_MS + (i & 7), None, VALUE)
    batches.append(builder.build())
    return batches


def decode_samsa(blob: bytes) -> int:
    count = 0
    for _header, records in decode_records(blob):
        count += len(records)
    return count


def build_kafka_python(n: int, batch_size: int, codec: Compression) -> list[bytes]:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    def new() -> DefaultRecordBatchBuilder:
        return DefaultRecordBatchBuilder(2, int(codec), False, -1, -1, -1, batch_size)

    batches: list[bytes] = []
    builder = new()
    offset = 0
    for i in range(n):
        if builder.append(offset, TIMESTAMP_MS + (i & 7), None, VALUE, []) is None:
            batches.append(bytes(builder.build()))
            builder = new()
            offset = 0
            builder.append(offset, TIMESTAMP_MS + (i & 7), None, VALUE, [])
        offset += 1
    batches.append(bytes(builder.build()))
    return batches


def decode_kafka_python(blob: bytes) -> int:
    from kafka.record.memory_records import MemoryRecords

    records = MemoryRecords(blob)
    count = 0
    while records.has_next():
        batch = records.next_batch()
        for _record in batch:
            count += 1
    return count


def _timed(label: str, n: int, fn: object, *args: object) -> object:
    start = time.perf_counter()
    result = fn(*args)  # type: ignore[operator]
    elapsed = time.perf_counter() - start
    print(f"{label:<28} {elapsed:7.3f} s  {elapsed / n * 1e6:6.3f} us/record")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--batch-size", type=int, default=16384)
    parser.add_argument("--codec", default="none", choices=[c.name.lower() for c in Compression])
    parser.add_argument("--skip-kafka-python", action="store_true")
    args = parser.parse_args()
    n = args.records
    codec = Compression[args.codec.upper()]

    batches = _timed("samsa build", n, build_samsa, n, args.batch_size, codec)
    blob = b"".join(batches)  # type: ignore[arg-type]
    decoded = _timed("samsa decode", n, decode_samsa, blob)
    assert decoded == n, decoded
    if not args.skip_kafka_python:
        kp_batches = _timed("kafka-python build", n, build_kafka_python, n, args.batch_size, codec)
        kp_blob = b"".join(kp_batches)  # type: ignore[arg-type]
        _timed("kafka-python decode", n, decode_kafka_python, kp_blob)


if __name__ == "__main__":
    main()
