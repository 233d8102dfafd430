"""One partition as the broker sees it: its log, producer state and watermarks.

The produce path never decodes records: each batch's 61-byte header is read and
checked (size, CRC, counts), idempotent sequences are checked against the
producer state, and the bytes are appended with only their base offset (and,
for LogAppendTime topics, their timestamp and CRC) rewritten.

On a single node the high watermark equals the log end offset: a write is
committed once it is in the leader's log.  Replication will move it separately.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

from samsa.errors import DecodeError, ErrorCode, InvalidRecordError, KafkaError
from samsa.protocol.record_batch import (
    CONTROL_MASK,
    NO_PARTITION_LEADER_EPOCH,
    BatchHeader,
    iter_batches,
    validate_client_batch,
)
from samsa.protocol.record_reader import decode_batch
from samsa.storage.log import Log
from samsa.storage.log_config import LogConfig
from samsa.storage.producer_state import ProducerStateManager

log = logging.getLogger("samsa.server")


class AppendResult(NamedTuple):
    """One partition's produce outcome (a NamedTuple: built per partition per request)."""

    base_offset: int
    last_offset: int
    log_append_time_ms: int
    log_start_offset: int
    duplicate: bool = False


class Partition:
    def __init__(
        self,
        topic: str,
        index: int,
        log_: Log,
        producer_state: ProducerStateManager,
        time_ms: Callable[[], int],
    ) -> None:
        self.topic = topic
        self.index = index
        self.log = log_
        self.producer_state = producer_state
        # Leader epochs do not exist yet on a single node: -1 everywhere, so clients
        # skip OffsetForLeaderEpoch validation (kafka-protocol-facts §4.2 item 7).
        self.leader_epoch = NO_PARTITION_LEADER_EPOCH
        self._time_ms = time_ms
        self.on_append: Callable[[Partition, int], None] | None = None

    @property
    def config(self) -> LogConfig:
        return self.log.config

    @property
    def high_watermark(self) -> int:
        return self.log.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    def append_from_client(self, records: memoryview) -> AppendResult:
        """Validate and append a producer's batches; raises KafkaError with the code to return."""
        config = self.config
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

        if config.compact:
            self._check_keys(records, headers)

        idempotent = [h for _, h in headers if h.producer_id >= 0]
        if idempotent:
            duplicate = self._check_producer_state(idempotent)
            if duplicate is not None:
                return duplicate

        # A large request arrives in a buffer of its own (server/framing.py):
        # stamp offsets into it in place.  A small one shares a read-only frame.
        buf = records if not records.readonly else bytearray(records)
        info = self.log.append(buf, leader_epoch=self.leader_epoch, now_ms=self._time_ms())
        log_append_time = info.log_append_time
        offset = info.first_offset
        for _, header in headers:
            if header.producer_id >= 0:
                self.producer_state.update(
                    header.producer_id,
                    header.producer_epoch,
                    header.base_sequence,
                    header.last_sequence,
                    offset,
                    offset + header.last_offset_delta,
                    header.max_timestamp if log_append_time < 0 else log_append_time,
                )
            offset += header.last_offset_delta + 1
        if self.on_append is not None:
            self.on_append(self, len(buf))
        return AppendResult(
            info.first_offset, info.last_offset, log_append_time, self.log_start_offset
        )

    def _check_keys(self, records: memoryview, headers: list[tuple[int, BatchHeader]]) -> None:
        """A compacted topic keeps the latest record per key, so every record needs
        one: Kafka refuses the batch with INVALID_RECORD.  The only place the
        broker decodes records a client sent, and only for compacted topics."""
        for pos, header in headers:
            if header.attributes & CONTROL_MASK:
                continue
            try:
                batch = decode_batch(records, pos, header)
            except DecodeError as exc:
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
            for index, record in enumerate(batch):
                if record.key is None:
                    raise InvalidRecordError(
                        index,
                        "Compacted topic cannot accept message without key in topic "
                        f"partition {self.topic}-{self.index}.",
                    )

    def append_internal(self, buf: bytearray) -> int:
        """Append batches the broker built itself (group metadata, markers); returns the first offset."""
        info = self.log.append(buf, leader_epoch=self.leader_epoch)
        if self.on_append is not None:
            self.on_append(self, len(buf))
        return int(info.first_offset)

    def _check_producer_state(self, batches: list[BatchHeader]) -> AppendResult | None:
        """Kafka allows one idempotent batch per partition per request; a retried
        duplicate is answered with its original offsets and not stored again."""
        for header in batches:
            result = self.producer_state.check(
                header.producer_id,
                header.producer_epoch,
                header.base_sequence,
                header.last_sequence,
            )
            if result.is_duplicate:
                log.info(
                    "%s-%d: duplicate batch of producer %d seq %d-%d answered with offset %d",
                    self.topic,
                    self.index,
                    header.producer_id,
                    header.base_sequence,
                    header.last_sequence,
                    result.first_offset,
                )
                return AppendResult(
                    result.first_offset,
                    result.last_offset,
                    -1
                    if self.config.message_timestamp_type != "LogAppendTime"
                    else result.timestamp,
                    self.log_start_offset,
                    duplicate=True,
                )
        return None
