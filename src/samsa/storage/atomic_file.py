"""Replace a small file so that a crash leaves either the old or the new version.

Checkpoints, producer-state snapshots and ``meta.properties`` are rewritten
whole.  Writing in place could leave a torn file that recovery cannot read, so
each is written to a temporary name, fsynced, renamed over the old one, and
the directory is fsynced so the rename itself survives a power loss.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from samsa.storage import io_faults

TMP_SUFFIX = ".tmp"


def atomic_write(path: Path, data: bytes) -> None:
    """Atomically replace ``path`` with ``data`` (see module doc)."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        io_faults.check("write", tmp)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        io_faults.check("fsync", tmp)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
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
