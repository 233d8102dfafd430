"""Malformed input never escapes as anything but ``DecodeError``.

The broker closes a connection on ``DecodeError`` and keeps serving everyone
else; any other exception out of the codec would be a crash path reachable by a
single bad client.  Covers every API/version in the registry, both directions:
arbitrary bytes, every strict prefix of valid encodings (which must fail), and
random mutations of valid encodings.
"""

from __future__ import annotations

import struct
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samsa.errors import DecodeError
from samsa.protocol.api import (
    decode_message,
    decode_request,
    decode_response,
    encode_message,
    encode_request,
)
from samsa.protocol.messages import APIS
from samsa.protocol.schema import Api

from .samples import VARIANTS, api_versions, sample_body

FUZZ = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

CASES = [pytest.param(a, v, id=f"{a.name}-v{v}") for a, v in api_versions(APIS)]


@cache
def _valid_encodings(api: Api, version: int) -> list[tuple[bool, bytes]]:
    out = []
    for request in (True, False):
        fields = api.request if request else api.response
        for variant in VARIANTS:
            out.append(
                (
                    request,
                    encode_message(
                        api.key, version, sample_body(fields, version, variant), request
                    ),
                )
            )
    return out


def _decode_or_reject(api: Api, version: int, buf: bytes, request: bool) -> None:
    try:
        decode_message(api.key, version, buf, request)
    except DecodeError:
        pass


@pytest.mark.parametrize(("api", "version"), CASES)
@FUZZ
@given(buf=st.binary(max_size=256), request=st.booleans())
def test_arbitrary_bytes_raise_only_decode_error(
    api: Api, version: int, buf: bytes, request: bool
) -> None:
    _decode_or_reject(api, version, buf, request)
    try:  # the same bytes behind a response header (correlation id, maybe tags)
        decode_response(api.key, version, memoryview(struct.pack(">i", 5) + buf))
    except DecodeError:
        pass


@pytest.mark.parametrize(("api", "version"), CASES)
def test_every_truncation_is_rejected(api: Api, version: int) -> None:
    """Messages are self-delimiting, so no strict prefix of a valid one can decode."""
    for request, encoded in _valid_encodings(api, version):
        for cut in range(len(encoded)):
            with pytest.raises(DecodeError):
                decode_message(api.key, version, encoded[:cut], request)


EDITS = st.lists(
    st.tuples(
        st.sampled_from(["set", "insert", "delete"]), st.integers(0, 2**16), st.integers(0, 255)
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize(("api", "version"), CASES)
@FUZZ
@given(which=st.integers(0, 3), edits=EDITS)
def test_mutated_encodings_raise_only_decode_error(
    api: Api, version: int, which: int, edits: list[tuple[str, int, int]]
) -> None:
    request, encoded = _valid_encodings(api, version)[which]
    buf = bytearray(encoded)
    for action, where, byte in edits:
        pos = where % (len(buf) + 1)
        if action == "insert":
            buf.insert(pos, byte)
        elif pos < len(buf):
            if action == "set":
                buf[pos] = byte
            else:
                del buf[pos]
    _decode_or_reject(api, version, bytes(buf), request)


@FUZZ
@given(frame=st.binary(max_size=64))
def test_arbitrary_request_frames_raise_only_decode_error(frame: bytes) -> None:
    try:
        decode_request(memoryview(frame))
    except DecodeError:
        pass


@cache
def _valid_request_frame(api: Api, version: int) -> bytes:
    return encode_request(api.key, version, 1, "fuzz", sample_body(api.request, version))[4:]


@pytest.mark.parametrize(("api", "version"), CASES)
@FUZZ
@given(body=st.binary(max_size=128), cut=st.integers(0, 64))
def test_request_frames_with_valid_headers_raise_only_decode_error(
    api: Api, version: int, body: bytes, cut: int
) -> None:
    valid = _valid_request_frame(api, version)
    for frame in (valid[: len(valid) - cut], valid[: 8 + 2 + 4] + body):
        try:
            decode_request(memoryview(frame))
        except DecodeError:
            pass
