"""Broker-side schema id validation, as Confluent Server's ``confluent.value.schema.validation``.

On a topic with ``confluent.value.schema.validation`` (or ``.key.``) each
record's value (key) must start with Confluent's wire-format header -- the
magic byte 0 and a 4-byte schema id -- and the id must be registered for the
subject the topic's ``confluent.value.subject.name.strategy`` names.  A null
value (key) passes: tombstones carry no schema, as in Confluent Server.  The
records' bodies are never decoded: ``protocol.batches.schema_ids`` reads
the five bytes in front of each field from the record framing (a compressed
batch is decompressed for that), and each distinct id of the batch is asked
once of the registry (``SchemaIdCheck``, which the broker builds from the
schema registry's state on this node; replication knows nothing of it).

A failing batch is refused whole with INVALID_RECORD and one RecordError
per failing record (its index in the request's records and why), as Kafka
reports a compacted topic's keyless records.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from samsa.errors import DecodeError, ErrorCode, InvalidRecordError, KafkaError
from samsa.protocol.batches.record_batch import CONTROL_MASK, BatchHeader
from samsa.protocol.batches.schema_ids import FieldIds, batch_schema_ids
from samsa.storage.topic_config.log_config import LogConfig

__all__ = ["SchemaIdCheck", "SchemaIdRefusal", "check_schema_ids"]


class SchemaIdCheck(Protocol):
    """What the registry on this node answers (``samsa.registry.node.validation``)."""

    def refusal(self, schema_id: int, topic: str, is_key: bool, strategy: str) -> str | None:
        """Why a key (value) of ``topic`` may not carry ``schema_id`` under the subject
        name ``strategy``; None when it may."""
        ...


class SchemaIdRefusal(InvalidRecordError):
    """Records refused for their schema ids.  ``unregistered``: some carried an id the
    registry does not hold for the subject (it may have been registered a moment
    ago: the broker reads ``_schemas`` to its end and checks once more)."""

    def __init__(self, errors: list[tuple[int, str]], *, unregistered: bool) -> None:
        (first_index, first_message), *more = errors
        super().__init__(first_index, first_message, more=tuple(more))
        self.unregistered = unregistered


def check_schema_ids(
    records: memoryview,
    headers: list[tuple[int, BatchHeader]],
    config: LogConfig,
    topic: str,
    check: SchemaIdCheck | None,
) -> None:
    """Raise SchemaIdRefusal naming every record that fails; KafkaError
    (CORRUPT_MESSAGE) for records that do not fit their batch, (INVALID_RECORD)
    for a compressed batch over ``max.decompressed.message.bytes``."""
    errors: list[tuple[int, str]] = []
    unregistered = False
    first = 0  # the index of the batch's first record among the request's records
    for pos, header in headers:
        if header.attributes & CONTROL_MASK:
            first += header.records_count
            continue
        try:
            keys, values = batch_schema_ids(
                records,
                pos,
                header,
                keys=config.confluent_key_schema_validation,
                values=config.confluent_value_schema_validation,
                max_record_body=config.max_decompressed_message_bytes,
            )
        except DecodeError as exc:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
        for field, is_key, on, strategy in (
            (
                keys,
                True,
                config.confluent_key_schema_validation,
                config.confluent_key_subject_name_strategy,
            ),
            (
                values,
                False,
                config.confluent_value_schema_validation,
                config.confluent_value_subject_name_strategy,
            ),
        ):
            if on and field is not None:
                unregistered |= _check_field(field, first, is_key, topic, strategy, check, errors)
        first += header.records_count
    if errors:
        errors.sort()
        raise SchemaIdRefusal(errors, unregistered=unregistered)


def _check_field(
    field: FieldIds,
    first: int,
    is_key: bool,
    topic: str,
    strategy: str,
    check: SchemaIdCheck | None,
    errors: list[tuple[int, str]],
) -> bool:
    """Add the field's failures to ``errors``; True when some id was not registered."""
    what = "key" if is_key else "value"
    unframed = np.flatnonzero(~field.null & ~field.framed)
    for index in unframed.tolist():
        errors.append(
            (
                first + index,
                f"the record's {what} has no schema id: it does not start with the magic "
                "byte 0 and a 4-byte schema id (Confluent's wire format)",
            )
        )
    framed = field.framed
    if not framed.any():
        return False
    ids = field.ids[framed]
    first_id = ids[0]
    # A batch nearly always carries one schema id: no sort for it.
    distinct = [int(first_id)] if (ids == first_id).all() else np.unique(ids).tolist()
    unregistered = False
    for schema_id in distinct:
        if check is None:
            why: str | None = "no schema registry answers on this broker"
        else:
            why = check.refusal(schema_id, topic, is_key, strategy)
        if why is None:
            continue
        unregistered = True
        for index in np.flatnonzero(field.ids == schema_id).tolist():
            errors.append((first + index, f"the record's {what} has schema id {schema_id}: {why}"))
    return unregistered
