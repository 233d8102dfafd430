"""Envelope (58): a forwarded request with its client's principal, as Kafka frames it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import DecodeError
from samsa.protocol.envelope import (
    ForwardedPrincipal,
    RequestOrigin,
    decode_principal,
    encode_principal,
    unwrap_request,
    unwrap_response,
    wrap_request,
    wrap_response,
)

CREATE = {
    "owner_principal_type": "User",
    "owner_principal_name": "carol",
    "renewers": [{"principal_type": "User", "principal_name": "bob"}],
    "max_lifetime_ms": 60000,
}


def test_principal_data_is_kafkas_version_prefixed_default_principal_data() -> None:
    """DefaultKafkaPrincipalBuilder.serialize: int16 version 0, then the flexible
    struct (compact strings Type and Name, bool TokenAuthenticated, no tags)."""
    data = encode_principal(ForwardedPrincipal("User", "alice", True))
    assert data == b"\x00\x00" + b"\x05User" + b"\x06alice" + b"\x01" + b"\x00"
    assert decode_principal(data) == ForwardedPrincipal("User", "alice", True)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "10.1.2.3"])
def test_a_request_round_trips_with_its_origin(host: str) -> None:
    origin = RequestOrigin(ForwardedPrincipal("User", "alice"), host)
    envelope = wrap_request(38, 3, CREATE, origin, client_id="node-1", correlation_id=7)
    assert len(envelope["client_host_address"]) == (16 if ":" in host else 4)
    inner = unwrap_request(envelope)
    assert (inner.header.api_key, inner.header.api_version, inner.header.correlation_id) == (
        38,
        3,
        7,
    )
    assert inner.body == CREATE
    assert inner.origin == origin


def test_a_response_round_trips() -> None:
    answer = {"error_code": 63, "expiry_timestamp_ms": 0, "throttle_time_ms": 0}
    assert unwrap_response(39, 2, wrap_response(39, 2, 5, answer)) == answer
    with pytest.raises(DecodeError, match="refused with error 31"):
        unwrap_response(39, 2, {"response_data": None, "error_code": 31})


@pytest.mark.parametrize(
    "bad",
    [
        {"request_principal": None},
        {"request_principal": b"\x00\x01rest"},
        {"request_principal": encode_principal(ForwardedPrincipal("User", "a")) + b"x"},
        {"client_host_address": b"\x01\x02\x03"},
        {"request_data": b"\x00\x26\x00\x63"},
    ],
)
def test_a_malformed_envelope_is_a_decode_error(bad: dict[str, object]) -> None:
    origin = RequestOrigin(ForwardedPrincipal("User", "alice"), "127.0.0.1")
    envelope = {**wrap_request(38, 3, CREATE, origin), **bad}
    with pytest.raises(DecodeError):
        unwrap_request(envelope)


@settings(max_examples=300, deadline=None, database=None)
@given(principal=st.binary(max_size=64), data=st.binary(max_size=64), host=st.binary(max_size=20))
def test_arbitrary_envelopes_raise_only_decode_error(
    principal: bytes, data: bytes, host: bytes
) -> None:
    envelope = {"request_data": data, "request_principal": principal, "client_host_address": host}
    try:
        unwrap_request(envelope)
    except DecodeError:
        pass
