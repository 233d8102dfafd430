"""Request/response framing on top of the compiled message codecs.

Header rules (Kafka's ``RequestHeader.json`` / ``ResponseHeader.json``):
request header v1 (non-flexible API version) = api_key, api_version,
correlation_id, client_id (int16 string, nullable); v2 (flexible) adds a tagged
field section, while client_id stays an int16 string.  Response header v0 is the
correlation id; v1 adds tagged fields -- except ApiVersions, whose response
always uses header v0 so that any client can parse it.

Nothing here touches sockets: callers pass frame bodies (without the 4-byte size
prefix) in, and get lists of output chunks back.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

from samsa.errors import DecodeError
from samsa.protocol.compiler import SPLICE_MIN, Decoder, Encoder
from samsa.protocol.compiler import decoder_for as _decoder_for
from samsa.protocol.compiler import encoder_for as _encoder_for
from samsa.protocol.messages import APIS
from samsa.protocol.primitives import read_uvarint
from samsa.protocol.reusable_body import ReusableBody
from samsa.protocol.schema import Api

API_VERSIONS_KEY = 18

# Compiled codecs keyed by (api key, version, is_request): hashing the schema
# tuples on every request (what the compiler's own cache keys on) is measurable
# on the hot path, an int tuple lookup is not.
_DECODERS: dict[tuple[int, int, bool], Decoder] = {}
_ENCODERS: dict[tuple[int, int, bool], Encoder] = {}


def _codec_decoder(api: Api, version: int, request: bool) -> Decoder:
    key = (api.key, version, request)
    fn = _DECODERS.get(key)
    if fn is None:
        fields = api.request if request else api.response
        fn = _DECODERS[key] = _decoder_for(fields, version, api.is_flexible(version))
    return fn


def _codec_encoder(api: Api, version: int, request: bool) -> Encoder:
    key = (api.key, version, request)
    fn = _ENCODERS.get(key)
    if fn is None:
        fields = api.request if request else api.response
        fn = _ENCODERS[key] = _encoder_for(fields, version, api.is_flexible(version))
    return fn


_HDR = struct.Struct(">hhih")
_I32 = struct.Struct(">i")
_HDR_FIXED = struct.Struct(">hhi")


class RequestHeader(NamedTuple):
    """A request's header fields (a NamedTuple: one is decoded per request)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def peek_header(frame: memoryview) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) of a request, without decoding the rest.

    Used to answer a request whose body cannot be decoded (unknown version) or to
    report which request was malformed.
    """
    if len(frame) < 8:
        raise DecodeError("request header is truncated")
    key, version, corr = _HDR_FIXED.unpack_from(frame, 0)
    return key, version, corr


def decode_request_header(frame: memoryview, api: Api | None) -> tuple[RequestHeader, int]:
    """Decode the request header; returns it and the position of the body."""
    if len(frame) < 10:
        raise DecodeError("request header is truncated")
    key, version, corr, client_len = _HDR.unpack_from(frame, 0)
    pos = 10
    client_id: str | None = None
    if client_len >= 0:
        if pos + client_len > len(frame):
            raise DecodeError("client_id is truncated")
        try:
            client_id = str(frame[pos : pos + client_len], "utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"client_id is not UTF-8: {exc}") from None
        pos += client_len
    if api is not None and api.is_flexible(version):
        pos = skip_tagged_fields(frame, pos)
    return RequestHeader(key, version, corr, client_id), pos


def skip_tagged_fields(buf: memoryview, pos: int) -> int:
    count, pos = read_uvarint(buf, pos)
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos += size
        if pos > len(buf):
            raise DecodeError("tagged field is truncated")
    return pos


def decode_request(frame: memoryview) -> tuple[RequestHeader, dict[str, Any]]:
    """Decode a whole request frame (header + body).

    Raises ``DecodeError`` for malformed bytes, and ``UnsupportedVersion`` when the
    API or version is not one the codec knows.
    """
    key, version, _corr = peek_header(frame)
    api = APIS.get(key)
    if api is None or not (api.valid[0] <= version <= api.valid[1]):
        raise UnsupportedVersion(key, version)
    header, pos = decode_request_header(frame, api)
    body, _end = _codec_decoder(api, version, True)(frame, pos)
    # Trailing bytes are ignored, as Kafka's own request parser does: librdkafka
    # 2.x appends bytes to some requests (e.g. Metadata v12) that Kafka never reads.
    return header, body


def encode_request(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: dict[str, Any]
) -> bytes:
    """Encode a request frame including its 4-byte size prefix (client side)."""
    return b"".join(encode_request_parts(api_key, version, correlation_id, client_id, body))


def encode_request_parts(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: dict[str, Any]
) -> list[Any]:
    """A request frame (size prefix first) as bytes-like parts that concatenate to it.

    Record sets of ``SPLICE_MIN`` bytes or more are returned as the very
    objects the body holds, not copies, so a produce request can be written
    from the producer's batch buffers (scatter-gather); the small pieces
    between them are joined.  The caller must keep those buffers unchanged
    until the parts are written.
    """
    api = APIS[api_key]
    flexible = api.is_flexible(version)
    head = bytearray(_HDR_FIXED.pack(api_key, version, correlation_id))
    if client_id is None:
        head += b"\xff\xff"
    else:
        cid = client_id.encode("utf-8")
        head += struct.pack(">h", len(cid)) + cid
    if flexible:
        head += b"\x00"
    chunks: list[Any] = [head]
    _codec_encoder(api, version, True)(body, chunks)
    parts: list[Any] = []
    small: list[Any] = [_I32.pack(sum(map(len, chunks)))]
    for chunk in chunks:
        if len(chunk) >= SPLICE_MIN:
            if small:
                parts.append(b"".join(small))
            parts.append(chunk)
            small = []
        else:
            small.append(chunk)
    if small:
        parts.append(b"".join(small))
    return parts


def encode_response(
    api_key: int, version: int, correlation_id: int, body: dict[str, Any]
) -> list[Any]:
    """Encode a response as output chunks, the first one carrying the size prefix.

    Chunks are bytes-like, except record values that were not bytes (file regions),
    which are passed through as they are for zero-copy sending.
    """
    api = APIS[api_key]
    flexible = api.is_flexible(version)
    reusable = body if type(body) is ReusableBody else None
    shared = None if reusable is None else reusable.encoded()
    if shared is None:
        chunks: list[Any] = []
        _codec_encoder(api, version, False)(body, chunks)
        if reusable is not None:
            reusable.keep(chunks[:])
    else:
        chunks = shared[:]
    header = _I32.pack(correlation_id)
    if flexible and api_key != API_VERSIONS_KEY:
        header += b"\x00"
    size = len(header) + sum(map(len, chunks))
    chunks.insert(0, _I32.pack(size) + header)
    return chunks


def decode_response(api_key: int, version: int, frame: memoryview) -> tuple[int, dict[str, Any]]:
    """Decode a response frame body (without size prefix): (correlation_id, body)."""
    api = APIS[api_key]
    flexible = api.is_flexible(version)
    if len(frame) < 4:
        raise DecodeError("response is truncated")
    (corr,) = _I32.unpack_from(frame, 0)
    pos = 4
    if flexible and api_key != API_VERSIONS_KEY:
        pos = skip_tagged_fields(frame, pos)
    body, end = _codec_decoder(api, version, False)(frame, pos)
    if end != len(frame):
        raise DecodeError(f"{api.name} v{version} response has {len(frame) - end} trailing bytes")
    return corr, body


def decode_message(api_key: int, version: int, buf: bytes, request: bool) -> dict[str, Any]:
    """Decode a bare body (no header), for tests and tools."""
    api = APIS[api_key]
    body, end = _codec_decoder(api, version, request)(memoryview(buf), 0)
    if end != len(buf):
        raise DecodeError(f"{len(buf) - end} trailing bytes")
    return body


def encode_message(api_key: int, version: int, body: dict[str, Any], request: bool) -> bytes:
    """Encode a bare body (no header), for tests and tools."""
    api = APIS[api_key]
    chunks: list[Any] = []
    _codec_encoder(api, version, request)(body, chunks)
    return b"".join(bytes(c) for c in chunks)


class UnsupportedVersion(DecodeError):
    """A request for an API key or version the codec does not know."""

    def __init__(self, api_key: int, api_version: int) -> None:
        self.api_key = api_key
        self.api_version = api_version
        super().__init__(f"unsupported api key {api_key} version {api_version}")
