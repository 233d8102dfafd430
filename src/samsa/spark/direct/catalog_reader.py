"""The remote segments of some partitions, read from ``__remote_log_metadata`` as a client (on the driver).

Brokers have no API that lists remote segments; the metadata topic is their
record, and ``tiered.catalog`` turns its records into a partition's readable
segments.  Each user partition's events all go to one metadata partition
(Kafka's partitioner, ``tiered.metadata.partitioner``), so only those are
read, from their earliest offset to their high watermark, with the same
client settings (and so the same credentials) as the query's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from samsa.client.admin import EARLIEST, LATEST, Admin
from samsa.client.metadata import TopicPartition
from samsa.tiered.catalog import RemoteCatalog
from samsa.tiered.metadata.model import TopicIdPartition
from samsa.tiered.metadata.partitioner import METADATA_TOPIC, metadata_partition

__all__ = ["NoRemoteMetadata", "read_catalog"]


class NoRemoteMetadata(LookupError):
    """``__remote_log_metadata`` does not exist: nothing was ever tiered in this cluster."""


def read_catalog(
    admin: Admin, config: Mapping[str, Any], partitions: Iterable[TopicIdPartition]
) -> RemoteCatalog:
    """A catalog holding every remote segment of ``partitions`` the brokers recorded
    up to now.  Raises ``NoRemoteMetadata``, or the client's errors."""
    from samsa.client.arrow import PartitionRangeReader

    wanted = list(partitions)
    if METADATA_TOPIC not in admin.list_topics(include_internal=True):
        raise NoRemoteMetadata(f"there is no {METADATA_TOPIC} topic")
    count = len(admin.describe_topics([METADATA_TOPIC])[METADATA_TOPIC].partitions)
    metadata_partitions = sorted({metadata_partition(p, count) for p in wanted})
    tps = [TopicPartition(METADATA_TOPIC, m) for m in metadata_partitions]
    lows = admin.list_offsets(dict.fromkeys(tps, EARLIEST))
    highs = admin.list_offsets(dict.fromkeys(tps, LATEST))
    catalog = RemoteCatalog({p.topic for p in wanted})
    settings = {k: v for k, v in config.items() if k != "isolation.level"}
    for tp in tps:
        low, high = lows[tp][0], highs[tp][0]
        if high <= low:
            continue
        with PartitionRangeReader(settings, METADATA_TOPIC, tp.partition, low, high) as reader:
            for batch in reader:
                for value in batch.column("value").to_pylist():
                    catalog.apply(value)
    return catalog
