"""The schema id in front of each key and value, read from the record framing.

Checked against the record decoder (which reads every byte of every record) on
batches hypothesis makes: any keys, values and headers, every codec, records
long and short (the vector walk and the record-by-record one), and damaged
batches, which must be refused, never misread."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import DecodeError, KafkaError
from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_batch import iter_batches
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_batch
from samsa.protocol.batches.schema_ids import FieldIds, batch_schema_ids


def framed(schema_id: int, body: bytes = b"body") -> bytes:
    return b"\x00" + struct.pack(">I", schema_id) + body


def build(
    records: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]],
    codec: Compression = Compression.NONE,
) -> bytes:
    builder = RecordBatchBuilder(batch_size=1 << 26, compression=codec)
    for key, value, headers in records:
        builder.append(1_700_000_000_000, key, value, headers or None)
    return builder.build()


def expected(field: bytes | None) -> tuple[bool, bool, int]:
    if field is None:
        return True, False, -1
    if len(field) >= 5 and field[0] == 0:
        return False, True, struct.unpack(">I", field[1:5])[0]
    return False, False, -1


def as_rows(ids: FieldIds) -> list[tuple[bool, bool, int]]:
    return list(zip(ids.null.tolist(), ids.framed.tolist(), ids.ids.tolist(), strict=True))


def check(buf: bytes) -> None:
    """Read with and without a decompression limit: with one, lz4 and zstd batches
    are inflated into the reused buffer (``scratch_inflate``)."""
    ((pos, header),) = list(iter_batches(buf))
    decoded = decode_batch(buf, pos, header)
    for limit in (None, 1 << 20):
        keys, values = batch_schema_ids(buf, pos, header, max_record_body=limit)
        assert keys is not None and values is not None
        assert as_rows(keys) == [expected(r.key) for r in decoded]
        assert as_rows(values) == [expected(r.value) for r in decoded]


@pytest.mark.parametrize("codec", list(Compression))
def test_each_kind_of_field_in_every_codec(codec: Compression) -> None:
    values = [
        framed(7),
        b"plain",
        None,
        framed(9, b"y" * 20_000),  # longer than the vector walk takes
        framed(2**31 + 5, b""),
        b"\x00\x00\x00",  # the magic byte, but too short for an id
        b"",
    ]
    check(build([(framed(3) if i % 2 else None, v, []) for i, v in enumerate(values)], codec))


def test_long_runs_of_equal_records_take_the_vector_path() -> None:
    check(build([(None, framed(i % 5, b"z" * 100), []) for i in range(10_000)]))
    check(build([(b"k%d" % i, framed(i, b"z" * (i % 300)), [("h", b"v")]) for i in range(3000)]))


field = st.one_of(
    st.none(),
    st.binary(max_size=40),
    st.builds(framed, st.integers(0, 2**32 - 1), st.binary(max_size=30)),
)
record = st.tuples(
    field,
    field,
    st.lists(
        st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=8))), max_size=2
    ),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(record, min_size=1, max_size=300), st.sampled_from(list(Compression)))
def test_matches_the_record_decoder(records: list, codec: Compression) -> None:
    check(build(records, codec))


@settings(max_examples=200, deadline=None)
@given(st.lists(record, min_size=1, max_size=80), st.data())
def test_a_damaged_batch_is_refused_or_read_as_its_bytes_say(
    records: list, data: st.DataObject
) -> None:
    """Bytes changed inside the records (the CRC is not this function's job): the walk
    either raises DecodeError or reads records whose framing is intact."""
    buf = bytearray(build(records))
    ((pos, header),) = list(iter_batches(bytes(buf)))
    at = data.draw(st.integers(pos + 61, len(buf) - 1))
    buf[at] = data.draw(st.integers(0, 255))
    try:
        keys, values = batch_schema_ids(bytes(buf), pos, header)
    except (DecodeError, KafkaError):
        return
    assert keys is not None and values is not None
    assert len(keys) == len(values) == header.records_count
    only_values = batch_schema_ids(bytes(buf), pos, header, keys=False)
    assert only_values[0] is None and only_values[1] is not None


def test_a_batch_that_claims_more_records_than_it_holds_is_refused() -> None:
    buf = build([(None, framed(1), [])] * 3)
    ((pos, header),) = list(iter_batches(buf))
    more = replace(header, records_count=4)
    with pytest.raises(DecodeError):
        batch_schema_ids(buf, pos, more)
