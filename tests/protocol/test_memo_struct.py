"""Struct array elements that keep their encodings write the bytes a plain
dict writes, every version, and from their memo the second time."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samsa.protocol.api import encode_request, encode_response
from samsa.protocol.messages import APIS
from samsa.protocol.reusable_body import MemoStruct
from samsa.protocol.schema import Field

from .schema_strategies import body_strategy

METADATA, FETCH, PRODUCE = 3, 1, 0
FUZZ = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _memoized(fields: tuple[Field, ...], body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with every struct array element a MemoStruct, at every depth."""
    out = dict(body)
    for f in fields:
        value = body.get(f.name)
        if f.type == "struct" and isinstance(value, dict):
            out[f.name] = _memoized(f.fields, value)
        elif f.type == "[]struct" and value is not None:
            out[f.name] = [MemoStruct(_memoized(f.fields, v)) for v in value]
    return out


def _memos(fields: tuple[Field, ...], body: dict[str, Any]) -> list[MemoStruct]:
    found: list[MemoStruct] = []
    for f in fields:
        value = body.get(f.name)
        if f.type == "struct" and isinstance(value, dict):
            found += _memos(f.fields, value)
        elif f.type == "[]struct" and value is not None:
            for v in value:
                found.append(v)
                found += _memos(f.fields, v)
    return found


def _bytes(chunks: list[Any]) -> bytes:
    return b"".join(bytes(c) for c in chunks)


@pytest.mark.parametrize("version", range(APIS[METADATA].valid[0], APIS[METADATA].valid[1] + 1))
@given(data=st.data())
@FUZZ
def test_a_metadata_answer_of_memo_structs_is_the_same_bytes_twice(
    version: int, data: st.DataObject
) -> None:
    fields = APIS[METADATA].response
    body = data.draw(body_strategy(fields, version))
    plain = _bytes(encode_response(METADATA, version, 7, body))
    memoized = _memoized(fields, body)
    assert _bytes(encode_response(METADATA, version, 7, memoized)) == plain
    assert _bytes(encode_response(METADATA, version, 7, memoized)) == plain


def test_the_second_encoding_comes_from_the_memo() -> None:
    version = 12
    partition = MemoStruct(
        {
            "error_code": 0,
            "partition_index": 0,
            "leader_id": 1,
            "leader_epoch": 3,
            "replica_nodes": [1, 2],
            "isr_nodes": [1, 2],
            "offline_replicas": [],
        }
    )
    body = {"topics": [{"name": "t", "topic_id": b"\x01" * 16, "partitions": [partition]}]}
    first = _bytes(encode_response(METADATA, version, 7, body))
    assert len(partition.memo) == 1
    partition["leader_id"] = 2  # what the docstring forbids: shows the memo is used
    assert _bytes(encode_response(METADATA, version, 7, body)) == first
    fresh = {**body, "topics": [{**body["topics"][0], "partitions": [dict(partition)]}]}
    assert _bytes(encode_response(METADATA, version, 7, fresh)) != first


def test_structs_that_hold_records_are_encoded_afresh_every_time() -> None:
    partition = MemoStruct({"index": 0, "records": b"\x00" * 70})
    topic = MemoStruct({"name": "t", "partition_data": [partition]})
    body = {"acks": -1, "timeout_ms": 1000, "topic_data": [topic]}
    encode_request(PRODUCE, 9, 1, "c", body)
    assert partition.memo == {} and topic.memo == {}


@given(data=st.data())
@FUZZ
def test_a_fetch_answer_of_memo_structs_keeps_nothing_that_holds_records(
    data: st.DataObject,
) -> None:
    version = APIS[FETCH].valid[1]
    fields = APIS[FETCH].response
    body = data.draw(body_strategy(fields, version))
    memoized = _memoized(fields, body)
    plain = _bytes(encode_response(FETCH, version, 7, body))
    assert _bytes(encode_response(FETCH, version, 7, memoized)) == plain
    holders = [m for m in _memos(fields, memoized) if "records" in m or "partitions" in m]
    assert all(m.memo == {} for m in holders)
