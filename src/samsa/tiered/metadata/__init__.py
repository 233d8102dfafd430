"""What ``__remote_log_metadata`` holds: record schemas, typed values, the per-partition cache."""

from samsa.tiered.metadata.cache import RemoteLogMetadataCache, RemoteResourceNotFoundError
from samsa.tiered.metadata.model import (
    EpochEntry,
    RemoteLogMetadata,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
    new_uuid,
    uuid_str,
)
from samsa.tiered.metadata.partition_store import RemotePartitionMetadataStore
from samsa.tiered.metadata.partitioner import (
    DEFAULT_METADATA_TOPIC_PARTITIONS,
    METADATA_TOPIC,
    metadata_partition,
)
from samsa.tiered.metadata.records import (
    decode_remote_log_metadata,
    encode_remote_log_metadata,
)

__all__ = [
    "DEFAULT_METADATA_TOPIC_PARTITIONS",
    "METADATA_TOPIC",
    "EpochEntry",
    "RemoteLogMetadata",
    "RemoteLogMetadataCache",
    "RemoteLogSegmentId",
    "RemoteLogSegmentMetadata",
    "RemoteLogSegmentMetadataUpdate",
    "RemoteLogSegmentState",
    "RemotePartitionDeleteMetadata",
    "RemotePartitionDeleteState",
    "RemotePartitionMetadataStore",
    "RemoteResourceNotFoundError",
    "TopicIdPartition",
    "decode_remote_log_metadata",
    "encode_remote_log_metadata",
    "metadata_partition",
    "new_uuid",
    "uuid_str",
]
