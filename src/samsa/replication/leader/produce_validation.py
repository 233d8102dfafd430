"""Checks on a producer's batches before the leader appends them.

The produce path never decodes records: each batch's 61-byte header is read
and checked (size, CRC, counts), idempotent sequences are checked against the
producer state, and only compacted topics have their records decoded (every
record needs a key there).  What passes is appended as bytes by the Partition.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from samsa.errors import DecodeError, ErrorCode, InvalidRecordError, KafkaError
from samsa.protocol.batches.record_batch import (
    CONTROL_MASK,
    BatchHeader,
    iter_batches,
    validate_client_batch,
)
from samsa.protocol.batches.record_reader import decode_batch
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.topic_config.log_config import LogConfig

log = logging.getLogger(__name__)

__all__ = [
    "Duplicate",
    "check_keys",
    "check_timestamps",
    "find_duplicate",
    "validate_client_records",
]

NO_TIMESTAMP = -1


class Duplicate(NamedTuple):
    """A retried idempotent batch already in the log: its original offsets."""

    first_offset: int
    last_offset: int
    timestamp: int


def validate_client_records(
    records: memoryview, config: LogConfig
) -> list[tuple[int, BatchHeader]]:
    """(position, header) of every batch; raises KafkaError with the code to return."""
    headers: list[tuple[int, BatchHeader]] = []
    consumed = 0
    for pos, header in iter_batches(records):
        validate_client_batch(records, pos, header, max_batch_bytes=config.max_message_bytes)
        headers.append((pos, header))
        consumed = pos + header.size
    if not headers or consumed != len(records):
        if len(records) > config.max_message_bytes:
            raise KafkaError(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"{len(records)} bytes of records exceed max.message.bytes={config.max_message_bytes}",
            )
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "records end with a truncated batch")
    return headers


def check_timestamps(
    headers: list[tuple[int, BatchHeader]], config: LogConfig, now_ms: int
) -> None:
    """Kafka's LogValidator.validateTimestamp on a CreateTime topic: a timestamp
    more than ``message.timestamp.before.max.ms`` in the past or
    ``message.timestamp.after.max.ms`` (default one hour) in the future is
    refused with INVALID_TIMESTAMP.

    Read from the batch header, not the records (which the broker does not
    decode): the batch's max timestamp bounds every record's from above, its
    first timestamp (the producer's first record) from below."""
    if config.message_timestamp_type != "CreateTime":
        return
    earliest = now_ms - config.message_timestamp_before_max_ms
    latest = now_ms + config.message_timestamp_after_max_ms
    for _, header in headers:
        if header.attributes & CONTROL_MASK:
            continue
        for timestamp in (header.max_timestamp, header.base_timestamp):
            if timestamp != NO_TIMESTAMP and not earliest <= timestamp <= latest:
                raise InvalidRecordError(
                    0,
                    f"Timestamp {timestamp} of message with offset 0 is out of range. The"
                    f" timestamp should be within [{earliest}, {latest}]",
                    ErrorCode.INVALID_TIMESTAMP,
                )


def check_keys(
    records: memoryview,
    headers: list[tuple[int, BatchHeader]],
    name: str,
    max_record_body: int,
) -> None:
    """A compacted topic keeps the latest record per key, so every record needs
    one: Kafka refuses the batch with INVALID_RECORD.  The only place the
    broker decodes records a client sent, and only for compacted topics; a
    compressed batch is inflated only within ``max.decompressed.message.bytes``
    (``max_record_body``), else refused with INVALID_RECORD as well."""
    for pos, header in headers:
        if header.attributes & CONTROL_MASK:
            continue
        try:
            batch = decode_batch(records, pos, header, max_record_body=max_record_body)
        except DecodeError as exc:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
        for index, record in enumerate(batch):
            if record.key is None:
                raise InvalidRecordError(
                    index,
                    f"Compacted topic cannot accept message without key in topic partition {name}.",
                )


def find_duplicate(
    producer_state: ProducerStateManager, batches: list[BatchHeader], name: str
) -> Duplicate | None:
    """Kafka allows one idempotent batch per partition per request; a retried
    duplicate is answered with its original offsets and not stored again.
    Raises KafkaError for sequence and epoch errors."""
    for header in batches:
        result = producer_state.check(
            header.producer_id,
            header.producer_epoch,
            header.base_sequence,
            header.last_sequence,
            is_transactional=header.is_transactional,
        )
        if result.is_duplicate:
            log.info(
                "%s: duplicate batch of producer %d seq %d-%d answered with offset %d",
                name,
                header.producer_id,
                header.base_sequence,
                header.last_sequence,
                result.first_offset,
            )
            return Duplicate(result.first_offset, result.last_offset, result.timestamp)
    return None
