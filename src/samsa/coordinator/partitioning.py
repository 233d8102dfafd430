"""Which ``__consumer_offsets`` partition holds a group: Kafka's placement, bit for bit.

Clients do not compute this, but a data dir written by Kafka (or read by
Kafka's tools) only lines up if we place groups exactly where Kafka does:
``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``, with Java's
``String.hashCode`` over UTF-16 code units and int32 overflow.
"""

from __future__ import annotations

_INT32_MIN = -(2**31)


def java_string_hash(value: str) -> int:
    """Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` in int32 arithmetic."""
    data = value.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_abs(value: int) -> int:
    """Kafka's ``Utils.abs``: like ``Math.abs`` but maps ``Integer.MIN_VALUE`` to 0, not itself."""
    return 0 if value == _INT32_MIN else abs(value)


def partition_for(group_id: str, num_partitions: int) -> int:
    """The ``__consumer_offsets`` partition that owns ``group_id``."""
    return java_abs(java_string_hash(group_id)) % num_partitions
