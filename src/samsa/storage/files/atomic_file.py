"""Replace a small file so that a crash leaves either the old or the new version.

Checkpoints, producer-state snapshots and ``meta.properties`` are rewritten
whole.  Writing in place could leave a torn file that recovery cannot read, so
each is written to a temporary name, fsynced, renamed over the old one, and
the directory is fsynced so the rename itself survives a power loss.

``sync=False`` keeps the atomicity (a process crash still leaves the old or
the new version: the page cache survives it) but leaves durability against a
power loss to a later ``sync_file``.  Files rewritten for thousands of
partitions at once (leader-epoch checkpoints when leadership moves) take that
path, and are synced with the log data they describe, as Kafka defers them
(KAFKA-15046).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from samsa.storage.files import io_faults

TMP_SUFFIX = ".tmp"


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Atomically replace ``path`` with ``data`` (see module doc)."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        io_faults.check("write", tmp)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            io_faults.check("fsync", tmp)
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_dir(path.parent)


def sync_file(path: Path) -> None:
    """Make an earlier ``atomic_write(..., sync=False)`` of ``path`` durable:
    its bytes, then its name in the directory."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in ``directory`` durable (where the OS allows
    opening a directory for fsync)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
