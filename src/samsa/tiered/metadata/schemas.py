"""The record schemas of ``__remote_log_metadata``, as Kafka declares them.

Transcribed from Kafka's ``storage/src/main/resources/message/``:
RemoteLogSegmentMetadataRecord (api key 0), RemoteLogSegmentMetadataUpdateRecord
(1), RemotePartitionDeleteMetadataRecord (2) and
RemoteLogSegmentMetadataSnapshotRecord (3, only in the local snapshot file
Kafka's FileBasedRemoteLogMetadataCache keeps).  Every one is flexible from v0.

Version 0 is what Kafka 3.6 to 4.1 read and write.  Version 1 (newer Kafka)
adds tagged fields: the broker's leader epoch when it published the event, and
an update's or a partition delete's end offset.  Samsa reads both and writes
v0, so a Kafka 4.1 ``kafka-console-consumer`` with Kafka's
RemoteLogMetadataFormatter reads what Samsa writes.  Defaults follow Kafka's
generator: a tagged field equal to its default is not written.
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F, Field

__all__ = [
    "REMOTE_LOG_METADATA_SCHEMAS",
    "REMOTE_LOG_SEGMENT_METADATA",
    "REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT",
    "REMOTE_LOG_SEGMENT_METADATA_UPDATE",
    "REMOTE_PARTITION_DELETE_METADATA",
    "WRITE_VERSION",
]

WRITE_VERSION = 0
"""The version Samsa writes (see the module docstring)."""

_TOPIC_ID_PARTITION: tuple[Field, ...] = (
    F("name", "string"),
    F("id", "uuid"),
    F("partition", "int32"),
)

_SEGMENT_ID = F(
    "remote_log_segment_id",
    "struct",
    fields=[F("topic_id_partition", "struct", fields=_TOPIC_ID_PARTITION), F("id", "uuid")],
)

_SEGMENT_LEADER_EPOCHS = F(
    "segment_leader_epochs",
    "[]struct",
    fields=[F("leader_epoch", "int32"), F("offset", "int64")],
)

REMOTE_LOG_SEGMENT_METADATA = DataSchema(
    "RemoteLogSegmentMetadataRecord",
    valid=(0, 1),
    flexible=0,
    fields=(
        _SEGMENT_ID,
        F("start_offset", "int64"),
        F("end_offset", "int64"),
        F("broker_id", "int32"),
        F("max_timestamp_ms", "int64"),
        F("event_timestamp_ms", "int64"),
        _SEGMENT_LEADER_EPOCHS,
        F("segment_size_in_bytes", "int32"),
        F("custom_metadata", "bytes", nullable="0+", default=None),
        F("remote_log_segment_state", "int8"),
        F("txn_index_empty", "bool", tag=0, tagged="0+"),
        F("broker_leader_epoch", "int32", "1+", tag=1, tagged="1+"),
    ),
)

REMOTE_LOG_SEGMENT_METADATA_UPDATE = DataSchema(
    "RemoteLogSegmentMetadataUpdateRecord",
    valid=(0, 1),
    flexible=0,
    fields=(
        _SEGMENT_ID,
        F("broker_id", "int32"),
        F("event_timestamp_ms", "int64"),
        F("custom_metadata", "bytes", nullable="0+", default=None),
        F("remote_log_segment_state", "int8"),
        F("broker_leader_epoch", "int32", "1+", tag=0, tagged="1+", default=-1),
        F("end_offset", "int64", "1+", tag=1, tagged="1+", default=-1),
    ),
)

REMOTE_PARTITION_DELETE_METADATA = DataSchema(
    "RemotePartitionDeleteMetadataRecord",
    valid=(0, 1),
    flexible=0,
    fields=(
        F("topic_id_partition", "struct", fields=_TOPIC_ID_PARTITION),
        F("broker_id", "int32"),
        F("event_timestamp_ms", "int64"),
        F("remote_partition_delete_state", "int8"),
        F("broker_leader_epoch", "int32", "1+", tag=0, tagged="1+"),
        F("end_offset", "int64", "1+", tag=1, tagged="1+"),
    ),
)

REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT = DataSchema(
    "RemoteLogSegmentMetadataSnapshotRecord",
    valid=(0, 1),
    flexible=0,
    fields=(
        F("segment_id", "uuid"),
        F("start_offset", "int64"),
        F("end_offset", "int64"),
        F("broker_id", "int32"),
        F("max_timestamp_ms", "int64"),
        F("event_timestamp_ms", "int64"),
        _SEGMENT_LEADER_EPOCHS,
        F("segment_size_in_bytes", "int32"),
        F("custom_metadata", "bytes", nullable="0+", default=None),
        F("remote_log_segment_state", "int8"),
        F("txn_index_empty", "bool", tag=0, tagged="0+"),
        F("broker_leader_epoch", "int32", "1+", tag=1, tagged="1+"),
    ),
)

REMOTE_LOG_METADATA_SCHEMAS: dict[int, DataSchema] = {
    0: REMOTE_LOG_SEGMENT_METADATA,
    1: REMOTE_LOG_SEGMENT_METADATA_UPDATE,
    2: REMOTE_PARTITION_DELETE_METADATA,
    3: REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT,
}
"""Kafka's api key (``MetadataRecordType`` of the storage module) of each record."""
