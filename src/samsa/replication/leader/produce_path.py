"""The produce path of a partition that serves clients (leader or standalone).

The produce path never decodes records: headers are checked
(produce_validation; on a topic with schema validation the five bytes in
front of each key or value too, schema_validation), idempotent duplicates are answered with their original
offsets, and the bytes are appended with only their base offset and leader
epoch (and, for LogAppendTime topics, timestamp and CRC) rewritten.
``acks=all`` is Kafka's: refused up front when the committed ISR is smaller
than ``min.insync.replicas``, then answered when the high watermark passes
the write (``wait_for_acks``).
"""

from __future__ import annotations

import asyncio

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import iter_batches
from samsa.protocol.batches.record_builder import ControlType, control_batch
from samsa.replication.leader.produce_validation import (
    check_keys,
    check_timestamps,
    find_duplicate,
    validate_client_records,
)
from samsa.replication.leader.schema_validation import SchemaIdCheck, check_schema_ids
from samsa.replication.partition_base import AppendResult, PartitionBase, PartitionRole

__all__ = ["ProducePath"]


class ProducePath(PartitionBase):
    def append_from_client(
        self,
        records: memoryview,
        *,
        required_acks: int = 1,
        schema_ids: SchemaIdCheck | None = None,
    ) -> AppendResult:
        """Validate and append a producer's batches; raises KafkaError with the code to return.

        With ``required_acks`` -1 the write is refused (NOT_ENOUGH_REPLICAS) before
        anything is appended when the committed ISR is smaller than
        ``min.insync.replicas`` (capped at the replica count, as Kafka's effective
        min ISR); the caller then awaits ``wait_for_acks``.  A topic with
        ``confluent.*.schema.validation`` has its records' schema ids checked against
        ``schema_ids`` (the registry's answers on this broker; None: none answers
        here, and such records are refused)."""
        self._require_leader()
        # A failed dir first: a refused batch did not advance the producer's sequence,
        # so checking its next one would answer OUT_OF_ORDER_SEQUENCE_NUMBER instead.
        self.log.require_online()
        config = self.config
        min_isr = self.effective_min_insync_replicas
        if required_acks == -1 and len(self.in_sync_replicas) < min_isr:
            raise KafkaError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"the ISR of {self.name} {sorted(self.in_sync_replicas)} is smaller than"
                f" its min.insync.replicas requirement of {min_isr}",
            )
        headers = validate_client_records(records, config)
        check_timestamps(headers, config, self._time_ms())
        if config.compact:
            check_keys(records, headers, self.name, config.max_decompressed_message_bytes)
        if config.validates_schema_ids:
            check_schema_ids(records, headers, config, self.topic, schema_ids)
        idempotent = [h for _, h in headers if h.producer_id >= 0]
        if idempotent:
            duplicate = find_duplicate(self.producer_state, idempotent, self.name)
            if duplicate is not None:
                append_time = (
                    -1 if config.message_timestamp_type != "LogAppendTime" else duplicate.timestamp
                )
                return AppendResult(
                    duplicate.first_offset,
                    duplicate.last_offset,
                    append_time,
                    self.log_start_offset,
                    duplicate=True,
                )
        # A large request arrives in a buffer of its own (server/connections/framing.py):
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
                    is_transactional=header.is_transactional,
                )
            offset += header.last_offset_delta + 1
        self._after_leader_append(info.first_offset, len(buf))
        return AppendResult(
            info.first_offset, info.last_offset, log_append_time, self.log_start_offset
        )

    def append_internal(self, buf: bytearray) -> int:
        """Append batches the broker built itself (group metadata, transactional
        offset commits); returns the first offset."""
        self._require_leader()
        info = self.log.append(buf, leader_epoch=self.leader_epoch)
        for _, header in iter_batches(buf):
            if header.producer_id >= 0:  # offsets of a transaction (TxnOffsetCommit)
                self.producer_state.replay_header(header)
        self._after_leader_append(info.first_offset, len(buf))
        return int(info.first_offset)

    def append_marker(
        self, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool
    ) -> int:
        """Write a COMMIT/ABORT marker for the coordinator (WriteTxnMarkers); returns
        its offset.  Raises KafkaError for a fenced producer or coordinator epoch."""
        self._require_leader()
        self.producer_state.check_marker(producer_id, producer_epoch, coordinator_epoch)
        now = self._time_ms()
        control = ControlType.COMMIT if commit else ControlType.ABORT
        buf = bytearray(
            control_batch(
                control,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                timestamp_ms=now,
                coordinator_epoch=coordinator_epoch,
            )
        )
        info = self.log.append(buf, leader_epoch=self.leader_epoch, now_ms=now)
        aborted = self.producer_state.complete_txn(
            producer_id, producer_epoch, coordinator_epoch, info.first_offset, now, int(control)
        )
        if aborted is not None:
            self.log.append_aborted_txn(aborted)
        self._after_leader_append(info.first_offset, len(buf))
        return int(info.first_offset)

    def _after_leader_append(self, first_offset: int, size: int) -> None:
        if self._role is PartitionRole.LEADER:
            self._unreplicated.append((first_offset, size))
            self._maybe_increment_high_watermark(self._time_ms())
        else:  # standalone: committed once written
            self._high_watermark = self.log.log_end_offset
            self.producer_state.forget_replicated(self._high_watermark)
        if self.on_append is not None:
            self.on_append(self, size)

    def check_enough_replicas(self, required_offset: int) -> ErrorCode | None:
        """Kafka's ``checkEnoughReplicasReachOffset``: None while the high watermark
        is below ``required_offset``, else NONE or NOT_ENOUGH_REPLICAS_AFTER_APPEND
        (the ISR shrank below ``min.insync.replicas`` after the append)."""
        if self._role is PartitionRole.STANDALONE:
            return ErrorCode.NONE
        if self._role is not PartitionRole.LEADER or self._leader is None:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.high_watermark < required_offset:
            return None
        return self._acks_outcome()

    async def wait_for_acks(self, required_offset: int, timeout_ms: int) -> ErrorCode:
        """Wait (Kafka's DelayedProduce) until the high watermark reaches
        ``required_offset`` (the produce's last offset + 1): NONE,
        NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER when leadership
        is lost meanwhile, or REQUEST_TIMED_OUT after ``timeout_ms``."""
        outcome = self.check_enough_replicas(required_offset)
        if outcome is not None:
            return outcome
        future = self._delayed.add(required_offset)
        try:
            return await asyncio.wait_for(future, max(timeout_ms, 0) / 1000)
        except TimeoutError:
            self._delayed.discard_done()
            return ErrorCode.REQUEST_TIMED_OUT
