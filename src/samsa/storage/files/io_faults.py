"""I/O errors on demand, for tests of what a broker does when its disk fails.

Some faults the kernel gives for real in a test (a full tmpfs answers ENOSPC),
others it does not without device-mapper (``dm-error``/``dm-flakey``), which
many kernels and containers lack: an EIO from ``fsync`` or ``write``.  For
those, the storage layer's writes and fsyncs call ``check`` first, and a test
switches faults on for a running broker process by writing a rules file.

Off in production and free: unless the ``SAMSA_IO_FAULTS`` environment variable
names a rules file when the process starts, ``check`` returns at once.  The
rules file holds one rule per line, ``<op> <path prefix> [<errno name>]``
(op ``write`` or ``fsync``, errno default ``EIO``), for example::

    fsync /tmp/run/node-2/
    write /tmp/run/node-1/ ENOSPC

A rule applies to every file under the prefix, so one broker of a cluster
(or one log dir of a broker) fails while the others keep working.  The file is
read again on each check, so faults come and go while the broker runs.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

ENV_VAR = "SAMSA_IO_FAULTS"
OPS = ("write", "fsync")

_rules_file: str | None = os.environ.get(ENV_VAR) or None


def check(op: str, path: str | Path) -> None:
    """Raise the OSError a rule asks for on ``op`` of ``path``; nothing when off."""
    if _rules_file is None:
        return
    code = _injected_errno(_rules_file, op, os.fspath(path))
    if code is not None:
        raise OSError(code, f"{os.strerror(code)} (injected by {ENV_VAR})", os.fspath(path))


def _injected_errno(rules_file: str, op: str, path: str) -> int | None:
    try:
        with open(rules_file, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) < 2 or fields[0] != op or not path.startswith(fields[1]):
            continue
        name = fields[2] if len(fields) > 2 else "EIO"
        return int(getattr(errno, name, errno.EIO))
    return None
