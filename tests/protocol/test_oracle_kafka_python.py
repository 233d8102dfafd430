"""Cross-check our encodings against kafka-python 3.0.12, an independent codec.

Two oracles, of different independence:

* kafka-python's current message classes are generated from Kafka's JSON too, but
  by a different codec.  Every API both sides know, at every shared version: our
  bytes must decode there to the same values, and its re-encoding must give the
  same bytes back (so field order, compact encodings, nullability and tagged
  fields all agree).
* kafka-python's older hand-written classes (``kafka.protocol.old``) were typed
  in field by field from the protocol guide, independently of the JSON.  For the
  core APIs we build their positional value tuples from our bodies and compare
  the bytes each side writes -- this catches transcription slips that a shared
  JSON source would hide.
"""

from __future__ import annotations

import importlib
import uuid
from typing import Any

import pytest

from samsa.protocol.api import decode_message, decode_response, encode_message, encode_request
from samsa.protocol.codegen.generator import active_fields as _active
from samsa.protocol.messages import APIS
from samsa.protocol.schema import Api, Field

from .samples import VARIANTS, api_versions, normalise, sample_body

kafka_protocol = pytest.importorskip("kafka.protocol")
api_message = importlib.import_module("kafka.protocol.api_message")
old_types = importlib.import_module("kafka.protocol.old.types")

for _pkg in ("admin", "consumer", "metadata", "producer", "sasl"):
    importlib.import_module(f"kafka.protocol.{_pkg}")


def _kp_classes() -> dict[tuple[int, bool], Any]:
    """kafka-python's primary message class per (api key, is request)."""
    found: dict[tuple[int, bool], Any] = {}
    stack = list(api_message.ApiMessage.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__dict__.get("_class_version", None) is None and "_json" in cls.__dict__:
            found[(cls.API_KEY, cls.is_request())] = cls
    return found


KP = _kp_classes()

# kafka-python shortens these two names; the wire position is what matters.
KP_NAMES = {
    "topic_authorized_operations": "authorized_operations",
    "cluster_authorized_operations": "authorized_operations",
}


def oracle_body(api: Api, version: int, request: bool, variant: int = 0) -> dict[str, Any]:
    """A sample body both codecs read the same way.

    kafka-python (like the Java client) reads an ApiVersions response whose
    error code is non-zero as v0 -- the KIP-511 fallback -- so keep it at 0.
    """
    body = sample_body(api.request if request else api.response, version, variant)
    if api.key == 18 and not request:
        body["error_code"] = 0
    return body


def _shared_cases() -> list[Any]:
    cases = []
    for api, version in api_versions(APIS):
        for request, kind in ((True, "req"), (False, "resp")):
            cls = KP.get((api.key, request))
            if cls is None or version > cls.max_version:
                continue
            for variant in VARIANTS:
                cases.append(
                    pytest.param(
                        api,
                        version,
                        request,
                        variant,
                        cls,
                        id=f"{api.name}-v{version}-{kind}-{variant}",
                    )
                )
    return cases


def _kp_value(value: Any) -> Any:
    """A kafka-python scalar in our representation (uuid.UUID -> 16 bytes)."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _bitfield(ops: Any) -> Any:
    """kafka-python shows authorized-operation bit fields as a set (None = -2**31)."""
    if ops is None:
        return -(2**31)
    if isinstance(ops, int):
        return ops
    mask = sum(1 << int(op) for op in ops)
    return mask - 2**32 if mask >= 2**31 else mask


def _kp_view(fields: tuple[Field, ...], version: int, obj: Any) -> Any:
    """Read a kafka-python object through *our* field names, for fields present at ``version``."""
    if obj is None:
        return None
    regular, tagged = _active(fields, version)
    out = {}
    for f in regular + tagged:
        name = f.name if hasattr(obj, f.name) else KP_NAMES.get(f.name, f.name)
        value = getattr(obj, name)
        if f.name.endswith("authorized_operations"):
            value = _bitfield(value)
        if f.is_struct_like and value is not None:
            if f.is_array:
                value = [_kp_view(f.fields, version, v) for v in value]
            else:
                value = _kp_view(f.fields, version, value)
        elif isinstance(value, list):
            value = [_kp_value(v) for v in value]
        else:
            value = _kp_value(value)
        out[f.name] = value
    return out


def _present(fields: tuple[Field, ...], version: int, body: Any) -> Any:
    """Keep only the fields that exist at ``version`` (kafka-python knows later ones too)."""
    if body is None:
        return None
    regular, tagged = _active(fields, version)
    out = {}
    for f in regular + tagged:
        value = body[f.name]
        if f.is_struct_like and value is not None:
            if f.is_array:
                value = [_present(f.fields, version, v) for v in value]
            else:
                value = _present(f.fields, version, value)
        out[f.name] = value
    return out


@pytest.mark.parametrize(("api", "version", "request_side", "variant", "kp_cls"), _shared_cases())
def test_kafka_python_reads_our_bytes_and_writes_them_back(
    api: Api, version: int, request_side: bool, variant: int, kp_cls: Any
) -> None:
    fields = api.request if request_side else api.response
    body = oracle_body(api, version, request_side, variant)
    ours = encode_message(api.key, version, body, request_side)

    theirs = kp_cls.decode(ours, version=version)
    assert _kp_view(fields, version, theirs) == _present(fields, version, body)
    theirs._header = None  # decoded objects lack the slot encode() consults
    assert bytes(theirs.encode(version=version)) == ours
    assert normalise(decode_message(api.key, version, ours, request_side)) == body


@pytest.mark.parametrize(
    ("api_key", "version"),
    [
        (0, 3),
        (0, 9),
        (1, 4),
        (1, 12),
        (2, 1),
        (2, 7),
        (3, 0),
        (3, 9),
        (3, 12),
        (19, 5),
        (22, 4),
        (18, 0),
        (18, 3),
        (18, 4),
    ],
)
def test_request_frames_match_kafka_python(api_key: int, version: int) -> None:
    """Whole frames (size, header v1/v2, body) are byte-identical."""
    api = APIS[api_key]
    body = sample_body(api.request, version)
    ours = encode_request(api_key, version, 42, "oracle", body)

    theirs = KP[(api_key, True)].decode(memoryview(ours)[4:], version=version, header=True)
    theirs.with_header(correlation_id=42, client_id="oracle")
    assert bytes(theirs.encode(version=version, header=True, framed=True)) == ours


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_response_frames_match_kafka_python(version: int) -> None:
    """ApiVersions responses keep header v0 even when flexible (KIP-511)."""
    body = oracle_body(APIS[18], version, request=False)
    cls = KP[(18, False)]
    theirs = cls.decode(encode_message(18, version, body, False), version=version)
    theirs.with_header(correlation_id=9)
    frame = bytes(theirs.encode(header=True, framed=True))
    corr, decoded = decode_response(18, version, memoryview(frame)[4:])
    assert corr == 9
    assert normalise(decoded) == body


# ----------------------------------------------------------------------------- hand-written oracle

# api key -> (module under kafka.protocol.old, class-list name stem)
OLD = {
    0: ("produce", "Produce"),
    1: ("fetch", "Fetch"),
    2: ("list_offsets", "ListOffsets"),
    3: ("metadata", "Metadata"),
    17: ("sasl_handshake", "SaslHandshake"),
    18: ("api_versions", "ApiVersions"),
    19: ("admin", "CreateTopics"),
    20: ("admin", "DeleteTopics"),
    21: ("admin", "DeleteRecords"),
    22: ("init_producer_id", "InitProducerId"),
    23: ("offset_for_leader_epoch", "OffsetForLeaderEpoch"),
    32: ("admin", "DescribeConfigs"),
    33: ("admin", "AlterConfigs"),
    35: ("admin", "DescribeLogDirs"),
    36: ("sasl_authenticate", "SaslAuthenticate"),
    37: ("admin", "CreatePartitions"),
    43: ("admin", "ElectLeaders"),
}


def _old_cases() -> list[Any]:
    cases = []
    for key, (module, stem) in OLD.items():
        mod = importlib.import_module(f"kafka.protocol.old.{module}")
        api = APIS[key]
        for request, suffix in ((True, "Request"), (False, "Response")):
            for cls in getattr(mod, stem + suffix):
                version = cls.API_VERSION
                # (kafka-python lists AlterConfigsRequest_v1 among the responses; skip such slips.)
                if key != cls.API_KEY or request != cls.is_request():
                    continue
                if api.valid[0] <= version <= api.valid[1]:
                    kind = "req" if request else "resp"
                    cases.append(
                        pytest.param(api, version, request, cls, id=f"{api.name}-v{version}-{kind}")
                    )
    return cases


def _positional(
    schema: Any, fields: tuple[Field, ...], version: int, body: dict[str, Any]
) -> list[Any]:
    """Our body as the old classes' positional tuples, guided by their schema."""
    regular, _tagged = _active(fields, version)
    old_fields = list(schema.fields)
    tagged_section = bool(old_fields) and old_fields[-1] is old_types.TaggedFields
    if tagged_section:
        old_fields.pop()
    values: list[Any] = []
    pending = list(regular)
    for old in old_fields:
        if isinstance(old, old_types.Schema):
            # An inline group of consecutive fields (CreatePartitions v0-1's new_partitions).
            group, pending = tuple(pending[: len(old.fields)]), pending[len(old.fields) :]
            values.append(_positional(old, group, version, body))
            continue
        f = pending.pop(0)
        value = body[f.name]
        if (
            f.type == "[]struct"
            and value is not None
            and not isinstance(old.array_of, old_types.Schema)
        ):
            # Old classes model a struct with one field as an array of that field.
            (only,) = _active(f.fields, version)[0]
            value = [v[only.name] for v in value]
        elif f.type == "[]struct" and value is not None:
            value = [_positional(old.array_of, f.fields, version, v) for v in value]
        elif old is old_types.BitField:
            value = {bit for bit in range(32) if value & (1 << bit)}
        elif f.type == "struct":
            value = _positional(old, f.fields, version, value)
        values.append(value)
    assert not pending, [f.name for f in pending]
    if tagged_section:
        values.append({})
    return values


def _without_tagged(
    fields: tuple[Field, ...], version: int, body: dict[str, Any]
) -> dict[str, Any]:
    """The old classes cannot write tagged fields: reset them to defaults."""
    out = dict(body)
    for f in fields:
        if version in f.tagged:
            out[f.name] = f.default_value()
        elif f.type == "[]struct" and out[f.name]:
            out[f.name] = [_without_tagged(f.fields, version, v) for v in out[f.name]]
        elif f.type == "struct" and out[f.name] is not None:
            out[f.name] = _without_tagged(f.fields, version, out[f.name])
    return out


@pytest.mark.parametrize(("api", "version", "request_side", "old_cls"), _old_cases())
def test_hand_written_kafka_python_classes_write_our_bytes(
    api: Api, version: int, request_side: bool, old_cls: Any
) -> None:
    fields = api.request if request_side else api.response
    body = _without_tagged(fields, version, oracle_body(api, version, request_side))
    ours = encode_message(api.key, version, body, request_side)
    theirs = old_cls(*_positional(old_cls.SCHEMA, fields, version, body)).encode()
    assert bytes(theirs) == ours
    assert bytes(old_cls.decode(ours).encode()) == ours
