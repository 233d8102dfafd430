"""OffsetMap: key -> offset of its latest record in the dirty section of a log.

Kafka's SkimpyOffsetMap stores 16-byte MD5 digests of keys in a fixed
buffer; here a dict holds keys shorter than 16 bytes as they are and longer
ones as a 16-byte BLAKE2b digest (a short key and a digest never compare
equal, their lengths differ), so memory per entry is bounded whatever the key
size.  A digest collision would make the cleaner drop a record whose key is
merely colliding: with 128-bit digests that is as unlikely as in Kafka.

The map is bounded by ``max_entries``; when it is full the cleaner cleans only
up to the last batch it could map, and the rest waits for the next pass.
"""

from __future__ import annotations

import hashlib

_DIGEST_BYTES = 16


class OffsetMap:
    """Latest offset per key for one cleaning pass; one thread at a time."""

    def __init__(self, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError("an offset map needs room for at least one key")
        self.max_entries = max_entries
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1  # last offset of the last batch mapped

    def __len__(self) -> int:
        return len(self._offsets)

    def has_room_for(self, records: int) -> bool:
        return len(self._offsets) + records <= self.max_entries

    def put(self, key: bytes, offset: int) -> None:
        self._offsets[_slot(key)] = offset

    def get(self, key: bytes) -> int:
        """The latest offset of ``key``, or -1 if it is not in the map."""
        return self._offsets.get(_slot(key), -1)

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1


def _slot(key: bytes) -> bytes:
    if len(key) < _DIGEST_BYTES:
        return bytes(key)
    return hashlib.blake2b(key, digest_size=_DIGEST_BYTES).digest()
