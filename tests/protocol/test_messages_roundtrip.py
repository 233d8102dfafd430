"""Every API in the registry round-trips at every version it claims to handle.

Bodies are generated from the schemas (``samples.py``), so an API added by a new
module is covered without touching this file.
"""

from __future__ import annotations

from typing import Any

import pytest

from samsa.protocol.api import (
    decode_message,
    decode_request,
    decode_response,
    encode_message,
    encode_request,
    encode_request_parts,
    encode_response,
)
from samsa.protocol.compiler import SPLICE_MIN
from samsa.protocol.messages import APIS
from samsa.protocol.schema import Api

from .samples import VARIANTS, api_versions, normalise, sample_body

CASES = [
    pytest.param(api, version, request, variant, id=f"{api.name}-v{version}-{kind}-{variant}")
    for api, version in api_versions(APIS)
    for request, kind in ((True, "req"), (False, "resp"))
    for variant in VARIANTS
]


@pytest.mark.parametrize(("api", "version", "request_side", "variant"), CASES)
def test_body_round_trips(api: Api, version: int, request_side: bool, variant: int) -> None:
    fields = api.request if request_side else api.response
    body = sample_body(fields, version, variant)
    encoded = encode_message(api.key, version, body, request_side)
    decoded = decode_message(api.key, version, encoded, request_side)
    assert normalise(decoded) == body
    # Encoding is a function of the decoded value alone.
    assert encode_message(api.key, version, decoded, request_side) == encoded


@pytest.mark.parametrize(
    ("api", "version"), [pytest.param(a, v, id=f"{a.name}-v{v}") for a, v in api_versions(APIS)]
)
def test_request_frame_round_trips(api: Api, version: int) -> None:
    body = sample_body(api.request, version)
    frame = encode_request(api.key, version, 123, "samsa-test", body)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    header, decoded = decode_request(memoryview(frame)[4:])
    assert (header.api_key, header.api_version, header.correlation_id) == (api.key, version, 123)
    assert header.client_id == "samsa-test"
    assert normalise(decoded) == body


@pytest.mark.parametrize(
    ("api", "version"), [pytest.param(a, v, id=f"{a.name}-v{v}") for a, v in api_versions(APIS)]
)
def test_response_frame_round_trips(api: Api, version: int) -> None:
    body = sample_body(api.response, version)
    chunks = encode_response(api.key, version, 77, body)
    frame = b"".join(bytes(c) for c in chunks)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    corr, decoded = decode_response(api.key, version, memoryview(frame)[4:])
    assert corr == 77
    assert normalise(decoded) == body


@pytest.mark.parametrize(
    ("api", "version"), [pytest.param(a, v, id=f"{a.name}-v{v}") for a, v in api_versions(APIS)]
)
def test_empty_body_decodes_to_defaults(api: Api, version: int) -> None:
    """An encoder given ``{}`` writes every field's default, and they decode back."""
    for request_side in (True, False):
        fields = api.request if request_side else api.response
        decoded: dict[str, Any] = decode_message(
            api.key, version, encode_message(api.key, version, {}, request_side), request_side
        )
        assert set(decoded) == {f.name for f in fields}
        for f in fields:
            if f.type == "struct":
                continue  # a missing struct is written with its own defaults
            if f.default_value() is None and version not in f.nullable and f.type != "records":
                continue  # non-nullable field whose default is null: encoder would fail
            assert decoded[f.name] == f.default_value(), f.name


@pytest.mark.parametrize("size", [100, SPLICE_MIN - 1, SPLICE_MIN, 100_000])
def test_request_parts_join_to_the_request_and_leave_large_record_sets_in_place(
    size: int,
) -> None:
    records = memoryview(bytearray(b"r" * size))
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}],
    }
    parts = encode_request_parts(0, 9, 5, "c", body)
    assert b"".join(parts) == encode_request(0, 9, 5, "c", body)
    assert any(p is records for p in parts) == (size >= SPLICE_MIN)
