"""The object store seen by the remote log manager: a narrow async interface and its errors.

Tiered storage needs five things of an object store: put an object from a
local file (a segment or an index), put small bytes (a leader-epoch
checkpoint), read a byte range (a fetch reads part of a segment), read a whole
object (an index), list a prefix (find orphans), delete several objects (a
remote segment is several objects).  ``RemoteStore`` is exactly that, so any
store with those five (S3 and what speaks its API, a directory) fits behind it.

Every method is a coroutine that never blocks the event loop: the S3 store
awaits a client whose I/O runs on its own threads, the filesystem store moves
each call to a worker thread.  Objects are immutable once written: a put
replaces an object whole and atomically, a reader sees the old or the new
bytes, never a mix.

Errors, mirrored on Kafka's RemoteStorageException family:

* ``RetriableRemoteStorageError``: try again later (timeouts, refused or reset
  connections, HTTP 5xx and 429/throttling, the server paused).  The copy task
  keeps its local segment and retries on its next run; a remote fetch answers a
  retriable error code.
* ``RemoteObjectNotFoundError``: the object is not there (Kafka's
  RemoteResourceNotFoundException); a delete of a missing object is not an error.
* ``RemoteStorageError``: anything else (bad credentials, no such bucket,
  invalid settings); not retried by the caller's loop without an operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from samsa.errors import SamsaError

__all__ = [
    "ObjectInfo",
    "RemoteObjectNotFoundError",
    "RemoteStorageError",
    "RemoteStore",
    "RetriableRemoteStorageError",
]


class RemoteStorageError(SamsaError):
    """A remote store operation failed and retrying alone will not help."""

    retriable = False


class RetriableRemoteStorageError(RemoteStorageError):
    """A remote store operation failed in a way that may pass on a later try."""

    retriable = True


class RemoteObjectNotFoundError(RemoteStorageError):
    """The object asked for does not exist."""


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """One listed object: its full key, size and when it was last written.

    ``last_modified_ms`` (wall clock, ms since the epoch; None when the store
    does not say) is what the orphan cleaner ages an object by.  Equality
    ignores it: two listings of the same objects compare equal."""

    key: str
    size: int
    last_modified_ms: int | None = field(default=None, compare=False)


class RemoteStore(Protocol):
    """An object store addressed by ``/``-separated keys (see the module doc).

    Keys are relative to the store's own root (an S3 store adds its configured
    prefix, the filesystem store its directory); callers never see either.
    """

    async def put_file(self, key: str, path: Path) -> None:
        """Upload the file at ``path`` as ``key`` (streamed, not read into memory)."""

    async def put_bytes(self, key: str, data: bytes) -> None:
        """Store ``data`` as ``key``."""

    async def get_range(self, key: str, start: int, length: int) -> bytes:
        """Up to ``length`` bytes of ``key`` from ``start`` on; fewer at the
        object's end, none when ``start`` is at or past it."""

    async def get(self, key: str) -> bytes:
        """The whole object."""

    async def list_objects(self, prefix: str) -> list[ObjectInfo]:
        """Every object below ``prefix``, sorted by key.  ``prefix`` is empty or
        ends with ``/``: S3 stores list by "directory" (object_store's model),
        so a prefix that ends inside a name is refused rather than half-served."""

    async def delete_many(self, keys: Sequence[str]) -> None:
        """Delete ``keys``; keys that do not exist are skipped silently."""

    async def close(self) -> None:
        """Release connections and threads; the store is not used afterwards."""

    def describe(self) -> str:
        """Where the store is, for logs: never a credential."""
