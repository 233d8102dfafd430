"""Java's ``Utils.murmur2`` and ``Utils.toPositive``, bit for bit.

Kafka hashes with murmur2 wherever a choice must agree across processes and
languages: the producer's default partitioner (a key's partition), and the
topic-based remote log metadata manager (which ``__remote_log_metadata``
partition holds a user partition's records).  Both sides of each choice live
in different Samsa packages (client, tiered), so the hash lives here, below
both.
"""

from __future__ import annotations

__all__ = ["murmur2", "to_positive"]

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Java's Utils.murmur2 (32-bit arithmetic, seed 0x9747b28c): a signed 32-bit int."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    length4 = length & ~3
    for i in range(0, length4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest == 3:
        h ^= data[length4 + 2] << 16
    if rest >= 2:
        h ^= data[length4 + 1] << 8
    if rest >= 1:
        h ^= data[length4]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(value: int) -> int:
    """Java's Utils.toPositive: the value with its sign bit cleared."""
    return value & 0x7FFFFFFF
