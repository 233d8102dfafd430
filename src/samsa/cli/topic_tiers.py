"""The two tiers of a topic with ``remote.storage.enable=true``, for ``samsa topics describe``.

Per partition: where the local log starts (ListOffsets -4, KIP-405), the last
offset the remote tier holds (-5, KIP-1005), and the bytes of its remote
segments, summed from ``__remote_log_metadata`` with ``tiered.catalog`` (the
brokers know no API that answers a remote size; the metadata topic is the
record of every remote segment).  The local size is DescribeLogDirs', as for
any topic.  Everything goes through ``samsa.client``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from samsa.client import Consumer, TopicPartition
from samsa.client.admin import Admin
from samsa.errors import SamsaError
from samsa.tiered.catalog import RemoteCatalog
from samsa.tiered.metadata.partitioner import METADATA_TOPIC

__all__ = ["EARLIEST_LOCAL", "LATEST_TIERED", "tier_details"]

EARLIEST_LOCAL = -4
LATEST_TIERED = -5


def tier_details(
    admin: Admin,
    config: dict[str, Any],
    topic: str,
    partitions: Iterable[TopicPartition],
    timeout: float,
) -> dict[TopicPartition, dict[str, int | None]]:
    """Per partition: ``local_log_start_offset``, ``tiered_end_offset`` (-1:
    nothing tiered) and ``remote_size_bytes`` (None where a broker did not say)."""
    parts = list(partitions)
    try:
        local = admin.list_offsets(dict.fromkeys(parts, EARLIEST_LOCAL), timeout=timeout)
        tiered = admin.list_offsets(dict.fromkeys(parts, LATEST_TIERED), timeout=timeout)
    except SamsaError:  # a broker before KIP-405/KIP-1005
        local, tiered = {}, {}
    sizes = _remote_sizes(admin, config, topic, timeout)
    return {
        tp: {
            "local_log_start_offset": local.get(tp, (None, None))[0],
            "tiered_end_offset": tiered.get(tp, (None, None))[0],
            "remote_size_bytes": None if sizes is None else sizes.get(tp.partition, 0),
        }
        for tp in parts
    }


def _remote_sizes(
    admin: Admin, config: dict[str, Any], topic: str, timeout: float
) -> dict[int, int] | None:
    """Remote bytes per partition of ``topic`` from ``__remote_log_metadata``
    (None when it can not be read)."""
    catalog = RemoteCatalog([topic])
    try:
        if METADATA_TOPIC not in admin.list_topics(timeout=timeout, include_internal=True):
            return {}
        described = admin.describe_topics([METADATA_TOPIC], timeout=timeout)[METADATA_TOPIC]
        count = len(described.partitions)
        with Consumer({**config, "enable.auto.commit": False}) as consumer:
            parts = [TopicPartition(METADATA_TOPIC, p) for p in range(count)]
            ends = consumer.end_offsets(parts, timeout=timeout)
            consumer.assign(parts)
            consumer.seek_to_beginning(parts)
            deadline = time.monotonic() + timeout
            left = {tp for tp in parts if ends.get(tp, 0) > 0}
            while left and time.monotonic() < deadline:
                for record in consumer.poll(0.5):
                    catalog.apply(record.value)
                for tp in list(left):
                    if consumer.position(tp, timeout=timeout) >= ends[tp]:
                        left.discard(tp)
            if left:
                return None
    except SamsaError:
        return None
    return {tip.partition: catalog.size_bytes(tip) for tip in catalog.partitions(topic)}
