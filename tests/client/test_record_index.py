"""The vectorised record index agrees with the record-at-a-time loop, or declines.

The index (numpy) is the consumer's fast path; ``_decode_blob`` is the
reference.  Two properties: for well-formed records whose varints fit, both
give the same records however the batch is cut into chunks; for any bytes at
all, the index either declines (None) or gives exactly what the loop gives --
it never accepts what the loop would reject.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samsa.client.consumer.fetch.decoder import _decode_blob
from samsa.client.consumer.fetch.record_index import index_records, records_between
from samsa.client.consumer.records import ConsumerRecord
from samsa.errors import DecodeError
from samsa.protocol.primitives import varint_bytes

BASE_OFFSET = 1_000
BASE_TS = 1_700_000_000_000
FIELDS = (ConsumerRecord, "t", 2, 0, None, 7)

Header = tuple[str, bytes | None]


def _field(data: bytes | None) -> bytes:
    return varint_bytes(-1) if data is None else varint_bytes(len(data)) + data


def encode_record(
    ts_delta: int,
    offset_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...] = (),
) -> bytes:
    """One record as Kafka lays it out (written here, independent of the producer's encoder)."""
    body = b"".join(
        [
            b"\x00",
            varint_bytes(ts_delta),
            varint_bytes(offset_delta),
            _field(key),
            _field(value),
            varint_bytes(len(headers)),
            *(_field(name.encode()) + _field(v) for name, v in headers),
        ]
    )
    return varint_bytes(len(body)) + body


def reference(data: bytes, count: int) -> list[ConsumerRecord]:
    records, pos = _decode_blob(data, 0, count, BASE_OFFSET, BASE_TS, None, ("t", 2), 0, 7)
    if pos != len(data):
        raise DecodeError("bytes after the last record")
    return records


blobs = st.one_of(
    st.none(),
    st.binary(max_size=12),
    st.binary(min_size=60, max_size=70),  # around the one-byte length limit (63)
    st.binary(min_size=8190, max_size=8194).map(lambda b: b[:1] * len(b)),  # two-byte limit
)
records = st.tuples(
    st.one_of(st.integers(-70, 70), st.integers(-(1 << 30), 1 << 30)),  # ts delta
    blobs,  # key
    blobs,  # value
    st.one_of(
        st.just(()),
        st.lists(st.tuples(st.text(max_size=3), st.one_of(st.none(), st.binary(max_size=3)))).map(
            tuple
        ),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(records, min_size=1, max_size=150),
    st.sampled_from(["sequential", "gaps"]),
    st.integers(1, 200),
)
def test_index_gives_the_loops_records_in_any_chunking(
    recs: list[Any], offsets: str, chunk: int
) -> None:
    delta = 0
    parts = []
    for i, (ts, key, value, headers) in enumerate(recs):
        delta = i if offsets == "sequential" else delta + 1 + (i % 3) * 50
        parts.append(encode_record(ts, delta, key, value, headers))
    data = b"".join(parts)
    count = len(recs)
    expected = reference(data, count)
    index = index_records(data, 0, len(data), count, BASE_OFFSET, BASE_TS)
    if any(not -(1 << 27) <= ts < 1 << 27 for ts, *_ in recs):
        assert index is None  # a five-byte varint: the loop's job
        return
    assert index is not None
    got: list[ConsumerRecord] = []
    for first in range(0, count, chunk):
        got += records_between(index, data, first, min(count, first + chunk), FIELDS)
    assert got == expected
    assert all(type(r) is ConsumerRecord for r in got)


def _valid_blob() -> tuple[bytes, int]:
    parts = [
        encode_record(i % 5, i, b"k%d" % i if i % 7 else None, b"v\x00"[i % 2 :] * (i % 90), ())
        for i in range(80)
    ]
    parts[10] = encode_record(3, 10, b"key", b"value", (("h", b"1"), ("n", None)))
    return b"".join(parts), len(parts)


VALID, VALID_COUNT = _valid_blob()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255), st.sampled_from("rid")),
        min_size=1,
        max_size=4,
    ),
    st.integers(-1, 1),
)
def test_damaged_bytes_are_declined_or_read_exactly_as_the_loop_reads_them(
    edits: list[tuple[int, int, str]], count_change: int
) -> None:
    data = bytearray(VALID)
    for pos, byte, kind in edits:
        pos %= len(data) or 1
        if kind == "r":
            data[pos] = byte
        elif kind == "i":
            data.insert(pos, byte)
        elif len(data) > 1:
            del data[pos]
    blob = bytes(data)
    count = VALID_COUNT + count_change
    index = index_records(blob, 0, len(blob), count, BASE_OFFSET, BASE_TS)
    try:
        expected = reference(blob, count)
    except DecodeError:
        assert index is None, "the index accepted records the loop rejects"
        return
    if index is not None:
        assert records_between(index, blob, 0, count, FIELDS) == expected


def test_a_count_larger_than_the_bytes_is_declined() -> None:
    assert index_records(VALID, 0, len(VALID), VALID_COUNT + 1, 0, 0) is None
    assert index_records(VALID, 0, len(VALID), VALID_COUNT - 1, 0, 0) is None
    assert index_records(VALID, 0, len(VALID), VALID_COUNT, 0, 0) is not None


@pytest.mark.parametrize("base", [1 << 62, -(1 << 62)])
def test_bases_near_the_int64_edge_are_left_to_the_loop(base: int) -> None:
    assert index_records(VALID, 0, len(VALID), VALID_COUNT, base, 0) is None
    assert index_records(VALID, 0, len(VALID), VALID_COUNT, 0, base) is None


def test_records_inside_a_larger_buffer_are_found_at_their_place() -> None:
    data = b"\xff" * 13 + VALID + b"\xee" * 5
    index = index_records(data, 13, 13 + len(VALID), VALID_COUNT, BASE_OFFSET, BASE_TS)
    assert index is not None
    assert records_between(index, data, 0, VALID_COUNT, FIELDS) == reference(VALID, VALID_COUNT)
