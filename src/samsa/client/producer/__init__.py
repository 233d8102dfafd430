"""The producer: Producer façade, accumulator, buffer pool, sender, partitioner."""

from samsa.client.producer.future import FutureRecordMetadata, RecordMetadata
from samsa.client.producer.partitioner import murmur2
from samsa.client.producer.producer import Producer

__all__ = ["FutureRecordMetadata", "Producer", "RecordMetadata", "murmur2"]
