"""The remote storage manager with Kafka's remote-storage meters counted on it.

Kafka's BrokerTopicMetrics count every copy, fetch and delete of a remote
segment per topic (``RemoteCopyBytesPerSec``, ``RemoteFetchRequestsPerSec``,
``RemoteDeleteErrorsPerSec``...).  Every one of them goes through the
``RemoteStorageManager``, so counting there catches the copy task's, the
expiration task's, the readers' and the follower rebuild's alike, and the
``samsa.tiered`` tasks stay free of metrics.  Plain ints in dicts, as the
broker's other counters (``server.observability.metrics``); ``/metrics``
reads them when scraped.
"""

from __future__ import annotations

from collections import defaultdict

from samsa.tiered.metadata.model import RemoteLogSegmentMetadata
from samsa.tiered.segment_objects import LogSegmentData, RemoteStorageManager, SegmentFile
from samsa.tiered.store.base import RemoteStore

__all__ = ["CountingStorageManager", "RemoteCounters"]


class RemoteCounters:
    """Per topic: bytes, requests and errors of copies, fetches and deletes."""

    def __init__(self) -> None:
        self.copy_bytes: defaultdict[str, int] = defaultdict(int)
        self.copy_requests: defaultdict[str, int] = defaultdict(int)
        self.copy_errors: defaultdict[str, int] = defaultdict(int)
        self.fetch_bytes: defaultdict[str, int] = defaultdict(int)
        self.fetch_requests: defaultdict[str, int] = defaultdict(int)
        self.fetch_errors: defaultdict[str, int] = defaultdict(int)
        self.delete_requests: defaultdict[str, int] = defaultdict(int)
        self.delete_errors: defaultdict[str, int] = defaultdict(int)


class CountingStorageManager(RemoteStorageManager):
    def __init__(self, store: RemoteStore, counters: RemoteCounters) -> None:
        super().__init__(store)
        self.counters = counters

    async def copy_log_segment_data(
        self, metadata: RemoteLogSegmentMetadata, data: LogSegmentData
    ) -> None:
        topic = metadata.topic_id_partition.topic
        self.counters.copy_requests[topic] += 1
        try:
            await super().copy_log_segment_data(metadata, data)
        except Exception:
            self.counters.copy_errors[topic] += 1
            raise
        self.counters.copy_bytes[topic] += metadata.segment_size_bytes

    async def fetch_log_segment(
        self, metadata: RemoteLogSegmentMetadata, start_position: int, length: int
    ) -> bytes:
        topic = metadata.topic_id_partition.topic
        self.counters.fetch_requests[topic] += 1
        try:
            data = await super().fetch_log_segment(metadata, start_position, length)
        except Exception:
            self.counters.fetch_errors[topic] += 1
            raise
        self.counters.fetch_bytes[topic] += len(data)
        return data

    async def fetch_index(self, metadata: RemoteLogSegmentMetadata, kind: SegmentFile) -> bytes:
        try:
            return await super().fetch_index(metadata, kind)
        except Exception:
            self.counters.fetch_errors[metadata.topic_id_partition.topic] += 1
            raise

    async def delete_log_segment_data(self, metadata: RemoteLogSegmentMetadata) -> None:
        topic = metadata.topic_id_partition.topic
        self.counters.delete_requests[topic] += 1
        try:
            await super().delete_log_segment_data(metadata)
        except Exception:
            self.counters.delete_errors[topic] += 1
            raise
