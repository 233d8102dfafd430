"""Real full disks for tests: a size-limited tmpfs per data dir (root only).

A tmpfs of a few MB answers ENOSPC like a full device, and freeing a filler
file gives the space back, so "the disk filled, then space came back" needs no
fake.  Errors the kernel gives only through device-mapper (EIO on write or
fsync) come from ``samsa.storage.files.io_faults`` instead.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["fill", "small_tmpfs"]


@contextlib.contextmanager
def small_tmpfs(directory: Path, size: str) -> Iterator[Path]:
    """``directory`` (created) as a tmpfs of ``size`` (mount's syntax: ``512k``, ``16m``);
    the test skips where mounting is not allowed."""
    directory.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot mount a tmpfs (needs root): {e}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False, capture_output=True)


def fill(directory: Path) -> Path:
    """Write until the file system is full; remove the returned file to free it."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 65536):
                pass
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 512):
                pass
    finally:
        os.close(fd)
    return filler
