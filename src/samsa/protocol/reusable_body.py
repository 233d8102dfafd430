"""A response body whose encoding identical answers may share.

Some answers are large and repeat until the state they describe changes (a
Metadata answer for 10,000 partitions: ~200 ms to encode on a loaded
machine, asked for by every client while a failover settles).  A handler
returns such a body as a ``ReusableBody`` tied to a ``EncodedSlot`` it keeps
per (state, request shape); the first encoding fills the slot and later
answers reuse its chunks.

Wrappers between the handler and the encoder may change an answer (the
access guard filters topics, client throttling sets ``throttle_time_ms``):
they replace top-level values, so a body whose top-level values are no
longer the ones it was made with is encoded afresh and its slot left alone.
"""

from __future__ import annotations

from typing import Any


class EncodedSlot:
    """The encoded chunks (without the response header) of one answer."""

    __slots__ = ("chunks",)

    def __init__(self) -> None:
        self.chunks: list[Any] | None = None


class ReusableBody(dict[str, Any]):
    __slots__ = ("_made_with", "_slot")

    def __init__(self, body: dict[str, Any], slot: EncodedSlot) -> None:
        super().__init__(body)
        self._slot = slot
        self._made_with = tuple(body.values())

    def _intact(self) -> bool:
        values = tuple(self.values())
        return len(values) == len(self._made_with) and all(
            a is b for a, b in zip(values, self._made_with, strict=True)
        )

    def encoded(self) -> list[Any] | None:
        """The shared chunks, if this body is as made and was encoded before."""
        return self._slot.chunks if self._intact() else None

    def keep(self, chunks: list[Any]) -> None:
        if self._intact():
            self._slot.chunks = chunks


class MemoStruct(dict[str, Any]):
    """One element of a struct array whose encodings are kept on it, one per
    compiled encoder that wrote it.

    For elements shared by many answers and rarely changed: a Metadata
    partition entry is the same object from one image to the next while its
    registration stays, so after a failover moves 200 of 10,000 leaderships
    an answer encodes 200 entries and copies 9,800 (35 ms of a loop before,
    per request, while every client asks).  Never change one after it was
    encoded: the old bytes would still be sent.  Structs holding ``records``
    are always encoded afresh (their value may be a file region)."""

    __slots__ = ("memo",)

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.memo: dict[object, bytes] = {}
