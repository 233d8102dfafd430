"""Record keys and values of the ``__transaction_state`` topic, as Kafka writes them.

The transaction coordinator keeps one record per transactional id in a
compacted topic: the key is ``TransactionLogKey`` (version int16 0, then the
transactional id), the value ``TransactionLogValue`` (version int16, then the
fields; v1 is flexible and adds tagged fields).  Writing Kafka's layout keeps
a Samsa data dir readable by Kafka's tools and lets Samsa load state a Kafka
broker wrote.  We write v0, as Kafka does for transaction version 1 clients;
both versions decode, a newer one with the v1 layout (KIP-915).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from samsa.errors import DecodeError
from samsa.protocol.internal_records.group_records import (
    _decode_key_body,
    _decode_value,
    _encode,
    _encode_value,
)
from samsa.protocol.schema import DataSchema, F, Field

__all__ = [
    "TransactionLogValue",
    "decode_transaction_key",
    "decode_transaction_value",
    "encode_transaction_key",
    "encode_transaction_value",
]

_KEY_VERSION = 0
_KEY_FIELDS: tuple[Field, ...] = (F("transactional_id", "string"),)

TRANSACTION_LOG_VALUE = DataSchema(
    "TransactionLogValue",
    valid=(0, 1),
    flexible=1,
    fields=(
        F("producer_id", "int64"),
        F("previous_producer_id", "int64", "1+", tag=0, tagged="1+", default=-1),
        F("next_producer_id", "int64", "1+", tag=1, tagged="1+", default=-1),
        F("producer_epoch", "int16"),
        F("transaction_timeout_ms", "int32"),
        F("transaction_status", "int8"),
        F(
            "transaction_partitions",
            "[]struct",
            nullable="0+",
            fields=[F("topic", "string"), F("partition_ids", "[]int32")],
        ),
        F("transaction_last_update_timestamp_ms", "int64"),
        F("transaction_start_timestamp_ms", "int64"),
        F("client_transaction_version", "int16", "1+", tag=2, tagged="1+", default=0),
    ),
)

_I16 = struct.Struct(">h")


@dataclass(frozen=True, slots=True)
class TransactionLogValue:
    """One transactional id's state; ``partitions`` maps topic -> partition ids."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: dict[str, tuple[int, ...]]
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0


def encode_transaction_key(transactional_id: str) -> bytes:
    return _I16.pack(_KEY_VERSION) + _encode(
        _KEY_FIELDS, 0, False, {"transactional_id": transactional_id}
    )


def decode_transaction_key(data: bytes | memoryview) -> str:
    buf = memoryview(data)
    if len(buf) < 2 or _I16.unpack_from(buf, 0)[0] != _KEY_VERSION:
        raise DecodeError("__transaction_state key is not a TransactionLogKey v0")
    return str(_decode_key_body(_KEY_FIELDS, buf)["transactional_id"])


def encode_transaction_value(value: TransactionLogValue, version: int = 0) -> bytes:
    body = {
        "producer_id": value.producer_id,
        "previous_producer_id": value.previous_producer_id,
        "next_producer_id": value.next_producer_id,
        "producer_epoch": value.producer_epoch,
        "transaction_timeout_ms": value.timeout_ms,
        "transaction_status": value.status,
        "transaction_partitions": [
            {"topic": topic, "partition_ids": list(ids)}
            for topic, ids in sorted(value.partitions.items())
        ],
        "transaction_last_update_timestamp_ms": value.last_update_ms,
        "transaction_start_timestamp_ms": value.start_ms,
        "client_transaction_version": value.client_transaction_version,
    }
    return _encode_value(TRANSACTION_LOG_VALUE, version, body)


def decode_transaction_value(data: bytes | memoryview) -> TransactionLogValue:
    _version, body = _decode_value(TRANSACTION_LOG_VALUE, data)
    return TransactionLogValue(
        producer_id=body["producer_id"],
        producer_epoch=body["producer_epoch"],
        timeout_ms=body["transaction_timeout_ms"],
        status=body["transaction_status"],
        partitions={
            p["topic"]: tuple(p["partition_ids"]) for p in body["transaction_partitions"] or ()
        },
        last_update_ms=body["transaction_last_update_timestamp_ms"],
        start_ms=body["transaction_start_timestamp_ms"],
        previous_producer_id=body["previous_producer_id"],
        next_producer_id=body["next_producer_id"],
        client_transaction_version=body["client_transaction_version"],
    )
