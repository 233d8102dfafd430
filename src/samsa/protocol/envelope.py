"""A forwarded request and its answer, wrapped as Kafka's brokers wrap them (Envelope).

A broker forwards a client's request to the active controller inside an
EnvelopeRequest (key 58) when the controller must know who asked: the
principal the broker authenticated, whether that was by a delegation token,
and the client's address (Kafka's ``ForwardingManager``; the controller
authorizes the inner request as that principal, from that address).

* ``request_data``: the inner request's header and body as a client frames
  them, without the size prefix.
* ``request_principal``: Kafka's ``DefaultPrincipalData`` (type, name,
  token_authenticated) behind a two-byte version, as
  ``DefaultKafkaPrincipalBuilder.serialize`` writes it.
* ``client_host_address``: the client's IPv4 (4 bytes) or IPv6 (16) address.

The answer's ``response_data`` is the inner response's header and body.
Sans-I/O: bytes and dicts in, bytes and dicts out.
"""

from __future__ import annotations

import ipaddress
import struct
from typing import Any, NamedTuple

from samsa.errors import DecodeError
from samsa.protocol.api import (
    RequestHeader,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from samsa.protocol.compiler import decoder_for, encoder_for
from samsa.protocol.schema import DataSchema, F

ENVELOPE_KEY = 58

PRINCIPAL_DATA = DataSchema(
    "DefaultPrincipalData",
    valid=(0, 0),
    flexible=0,
    fields=(F("type", "string"), F("name", "string"), F("token_authenticated", "bool")),
)
_PRINCIPAL_VERSION = 0
_SHORT = struct.Struct(">h")


class ForwardedPrincipal(NamedTuple):
    """Who sent a forwarded request, as the forwarding broker authenticated them."""

    type: str
    name: str
    token_authenticated: bool = False


class RequestOrigin(NamedTuple):
    """Who sent a request the broker forwards, and from where (the client's
    address without the port, as ACLs name hosts)."""

    principal: ForwardedPrincipal
    client_host: str


class Unwrapped(NamedTuple):
    header: RequestHeader
    body: dict[str, Any]
    origin: RequestOrigin


def encode_principal(principal: ForwardedPrincipal) -> bytes:
    chunks: list[Any] = [_SHORT.pack(_PRINCIPAL_VERSION)]
    encoder_for(PRINCIPAL_DATA.fields, _PRINCIPAL_VERSION, True)(principal._asdict(), chunks)
    return b"".join(bytes(chunk) for chunk in chunks)


def decode_principal(data: bytes) -> ForwardedPrincipal:
    """DecodeError for bytes that are not a DefaultPrincipalData v0 (Kafka answers
    PRINCIPAL_DESERIALIZATION_FAILURE)."""
    view = memoryview(data)
    if len(view) < 2:
        raise DecodeError("principal data is truncated")
    (version,) = _SHORT.unpack_from(view, 0)
    if version != _PRINCIPAL_VERSION:
        raise DecodeError(f"unknown principal data version {version}")
    body, end = decoder_for(PRINCIPAL_DATA.fields, _PRINCIPAL_VERSION, True)(view, 2)
    if end != len(view):
        raise DecodeError(f"{len(view) - end} bytes after the principal data")
    return ForwardedPrincipal(body["type"], body["name"], body["token_authenticated"])


def wrap_request(
    api_key: int,
    version: int,
    body: dict[str, Any],
    origin: RequestOrigin,
    *,
    client_id: str | None = None,
    correlation_id: int = 0,
) -> dict[str, Any]:
    """The EnvelopeRequest body carrying ``body`` as sent from ``origin``."""
    frame = encode_request(api_key, version, correlation_id, client_id, body)
    return {
        "request_data": frame[4:],
        "request_principal": encode_principal(origin.principal),
        "client_host_address": _address_bytes(origin.client_host),
    }


def unwrap_request(envelope: dict[str, Any]) -> Unwrapped:
    """The inner request, its sender and address; DecodeError for anything malformed
    (an unknown API or version among it: ``UnsupportedVersion`` is a DecodeError)."""
    raw_principal = envelope.get("request_principal")
    if raw_principal is None:
        raise DecodeError("the envelope names no principal")
    principal = decode_principal(bytes(raw_principal))
    header, body = decode_request(memoryview(bytes(envelope["request_data"])))
    host = _address_text(bytes(envelope["client_host_address"]))
    return Unwrapped(header, body, RequestOrigin(principal, host))


def wrap_response(
    api_key: int, version: int, correlation_id: int, body: dict[str, Any]
) -> dict[str, Any]:
    """The EnvelopeResponse body carrying the inner answer ``body``."""
    chunks = encode_response(api_key, version, correlation_id, body)
    data = b"".join(bytes(chunk) for chunk in chunks)[4:]
    return {"response_data": data, "error_code": 0}


def unwrap_response(api_key: int, version: int, envelope: dict[str, Any]) -> dict[str, Any]:
    """The inner answer; DecodeError when the envelope carries none (its
    ``error_code`` says why) or carries bytes that do not decode."""
    data = envelope.get("response_data")
    if data is None:
        raise DecodeError(f"the envelope was refused with error {envelope.get('error_code')}")
    _correlation, body = decode_response(api_key, version, memoryview(bytes(data)))
    return body


def _address_bytes(host: str) -> bytes:
    try:
        return ipaddress.ip_address(host.strip("[]")).packed
    except ValueError:
        return b""


def _address_text(data: bytes) -> str:
    if len(data) in (4, 16):
        return str(ipaddress.ip_address(data))
    if data:
        raise DecodeError(f"a client address of {len(data)} bytes")
    return ""
