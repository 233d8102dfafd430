"""The two produce checks that look inside a client's batch honour the topic's
max.decompressed.message.bytes: a compacted topic's key check and the schema
id check refuse a compressed batch whose records are over it with
INVALID_RECORD (no per-record errors: the batch as a whole, as Kafka)."""

from __future__ import annotations

import pytest

from samsa.errors import ErrorCode, InvalidRecordError, KafkaError
from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.replication.leader.produce_validation import check_keys, validate_client_records
from samsa.replication.leader.schema_validation import check_schema_ids
from samsa.storage.topic_config.log_config import LogConfig

FRAMED = b"\x00\x00\x00\x00\x07"  # Confluent's magic byte and schema id 7


class AnyId:
    def refusal(self, schema_id: int, topic: str, is_key: bool, strategy: str) -> str | None:
        return None


def config(limit: int) -> LogConfig:
    return LogConfig.from_dict(
        {
            "cleanup.policy": "compact",
            "max.message.bytes": str(16 << 20),
            "confluent.value.schema.validation": "true",
            "max.decompressed.message.bytes": str(limit),
        }
    )


def records(value: bytes, codec: Compression = Compression.ZSTD) -> memoryview:
    builder = RecordBatchBuilder(codec, batch_size=1 << 30)
    builder.append(1_700_000_000_000, b"key", FRAMED + value)
    builder.append(1_700_000_000_001, b"key", FRAMED + b"small")
    return memoryview(builder.build())


def both_checks(buf: memoryview, cfg: LogConfig) -> None:
    headers = validate_client_records(buf, cfg)
    check_keys(buf, headers, "t-0", cfg.max_decompressed_message_bytes)
    check_schema_ids(buf, headers, cfg, "t", AnyId())


@pytest.mark.parametrize("size", [2000, 64 << 20], ids=["over", "bomb"])
def test_a_compressed_batch_over_the_limit_is_invalid_record(size: int) -> None:
    cfg = config(1000)
    buf = records(bytes(size))
    headers = validate_client_records(buf, cfg)
    for check in (
        lambda: check_keys(buf, headers, "t-0", cfg.max_decompressed_message_bytes),
        lambda: check_schema_ids(buf, headers, cfg, "t", AnyId()),
    ):
        with pytest.raises(KafkaError) as refused:
            check()
        assert refused.value.code == ErrorCode.INVALID_RECORD
        assert not isinstance(refused.value, InvalidRecordError)  # the batch, not a record
        assert "max.decompressed.message.bytes" in str(refused.value)


def test_records_within_the_limit_and_uncompressed_ones_pass() -> None:
    both_checks(records(b"v" * 900), config(1000))
    both_checks(records(b"v" * 5000, Compression.NONE), config(1000))
