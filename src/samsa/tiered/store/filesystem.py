"""A directory as the remote tier: the single-node default, and the store for tests of the logic above it.

With ``remote.log.storage.system.enable=true`` and no S3 store configured, a
laptop user still gets tiering: segments move to a directory beside the first
log dir (another disk, a network mount, or just a cheaper place to keep
history).  Keys map to paths below the root; ``/`` in a key is a directory.

Crash behaviour: a put writes a uniquely named temporary file in the target's
directory, fsyncs it, renames it over the target and fsyncs the directory, so
after a crash an object is either absent or complete, never torn.  A crash may
leave a temporary file (``.<name>.<random>.tmp``); ``list_objects`` never shows them,
and ``remove_temporaries`` deletes them at start-up.

Threading: every call runs on the store's own small thread pool, never on the
event loop, and never on the loop's default executor (which other blocking
work shares): a slow disk delays only remote operations.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from samsa.storage.files.atomic_file import fsync_dir
from samsa.tiered.store.base import (
    ObjectInfo,
    RemoteObjectNotFoundError,
    RemoteStorageError,
    RetriableRemoteStorageError,
)

__all__ = ["FileSystemRemoteStore"]

_T = TypeVar("_T")
_TMP_SUFFIX = ".tmp"


def _is_temporary(name: str) -> bool:
    return name.startswith(".") and name.endswith(_TMP_SUFFIX)


class FileSystemRemoteStore:
    """``RemoteStore`` over a local directory (see the module doc)."""

    def __init__(self, root: Path, *, threads: int = 4) -> None:
        self.root = root.resolve()
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="remote-fs")

    def describe(self) -> str:
        return f"directory {self.root}"

    # -- the RemoteStore interface ----------------------------------------

    async def put_file(self, key: str, path: Path) -> None:
        await self._run(self._put, key, lambda f: _copy_into(path, f))

    async def put_bytes(self, key: str, data: bytes) -> None:
        await self._run(self._put, key, lambda f: _write_all(f, data))

    async def get_range(self, key: str, start: int, length: int) -> bytes:
        if start < 0 or length < 0:
            raise ValueError(f"bad range: start {start}, length {length}")
        return await self._run(self._read, key, start, length)

    async def get(self, key: str) -> bytes:
        return await self._run(self._read, key, 0, None)

    async def list_objects(self, prefix: str) -> list[ObjectInfo]:
        return await self._run(self._list, prefix)

    async def delete_many(self, keys: Sequence[str]) -> None:
        await self._run(self._delete, list(keys))

    async def close(self) -> None:
        self._executor.shutdown(wait=True)

    # -- start-up -------------------------------------------------------------

    def remove_temporaries(self) -> int:
        """Delete what interrupted puts left behind; returns how many files.
        Blocking: call it off the loop, before the store is used."""
        removed = 0
        if not self.root.exists():
            return 0
        for directory, _, files in os.walk(self.root):
            for name in files:
                if _is_temporary(name):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(directory, name))
                        removed += 1
        return removed

    # -- blocking parts (worker threads) ------------------------------------

    async def _run(self, fn: Callable[..., _T], *args: object) -> _T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, lambda: fn(*args))
        except (RemoteStorageError, ValueError):
            raise
        except FileNotFoundError as exc:
            raise RemoteObjectNotFoundError(f"{self.describe()}: {exc}") from exc
        except OSError as exc:
            # A full disk, an I/O error, a network mount gone away: all may pass.
            raise RetriableRemoteStorageError(f"{self.describe()}: {exc}") from exc

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if not key or any(p in ("", ".", "..") for p in parts) or _is_temporary(parts[-1]):
            raise ValueError(f"invalid object key {key!r}")
        return self.root.joinpath(*parts)

    def _put(self, key: str, write: Callable[[int], None]) -> None:
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.urandom(6).hex()}{_TMP_SUFFIX}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            try:
                write(fd)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        fsync_dir(target.parent)

    def _read(self, key: str, start: int, length: int | None) -> bytes:
        path = self._path(key)
        with open(path, "rb") as f:
            if length is None:
                return f.read()
            f.seek(start)
            return f.read(length)

    def _list(self, prefix: str) -> list[ObjectInfo]:
        if prefix and not prefix.endswith("/"):
            raise ValueError(f"a list prefix is empty or ends with '/': {prefix!r}")
        top = self._path(prefix.rstrip("/")) if prefix else self.root
        found: list[ObjectInfo] = []
        if not top.is_dir():
            return found
        for directory, _, files in os.walk(top):
            rel = os.path.relpath(directory, self.root)
            for name in files:
                if _is_temporary(name):
                    continue
                key = name if rel == "." else f"{rel.replace(os.sep, '/')}/{name}"
                if key.startswith(prefix):
                    with contextlib.suppress(FileNotFoundError):
                        stat = os.stat(os.path.join(directory, name))
                        found.append(ObjectInfo(key, stat.st_size, int(stat.st_mtime * 1000)))
        found.sort(key=lambda o: o.key)
        return found

    def _delete(self, keys: list[str]) -> None:
        parents: set[Path] = set()
        for key in keys:
            path = self._path(key)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                parents.add(path.parent)
        for parent in parents:
            fsync_dir(parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy_into(source: Path, fd: int) -> None:
    with open(source, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        offset = 0
        try:
            while offset < size:
                sent = os.sendfile(fd, src.fileno(), offset, size - offset)
                if sent == 0:
                    break
                offset += sent
        except OSError:
            # sendfile to a regular file is Linux-only; copy through user space elsewhere.
            src.seek(offset)
            with open(fd, "wb", closefd=False) as dst:
                shutil.copyfileobj(src, dst)
