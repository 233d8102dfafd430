"""A loopback of its own for the documented ports.

The docs use the ports a user would (9092, the cluster example's 9092-9097,
8080, 9100): two pages run at once, or a page beside another test, would take
each other's.  Where the tests have root, each page runs in a network namespace
with only its loopback up, so 127.0.0.1:9092 there is that page's alone; the
namespace is removed, with every process still in it, when the page is done.
Without root the page runs on the machine's loopback if its ports are free,
and is skipped (saying why) if not.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest

DOC_PORTS = (8080, 9092, 9093, 9094, 9095, 9096, 9097, 9100, 9192, 19092)
_names = itertools.count()


def _ip(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *argv], capture_output=True, text=True, timeout=30)


def busy_ports(ports: Sequence[int]) -> list[int]:
    busy = []
    for port in ports:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                busy.append(port)
    return busy


@contextmanager
def own_loopback(ports: Sequence[int] = DOC_PORTS) -> Iterator[list[str]]:
    """The argv prefix that runs a program on a loopback of its own ([] if none)."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        busy = busy_ports(ports)
        if busy:
            pytest.skip(f"no network namespaces without root, and ports {busy} are in use here")
        yield []
        return
    name = f"sdoc{os.getpid() % 100000}x{next(_names)}"
    added = _ip("netns", "add", name)
    if added.returncode != 0:
        pytest.skip(f"ip netns add failed: {added.stderr.strip()}")
    try:
        up = _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        assert up.returncode == 0, up.stderr
        yield ["ip", "netns", "exec", name]
    finally:
        _kill_all_in(name)
        _ip("netns", "del", name)


def _kill_all_in(name: str) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = [int(p) for p in _ip("netns", "pids", name).stdout.split()]
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 20
        while pids and time.monotonic() < deadline:
            pids = [int(p) for p in _ip("netns", "pids", name).stdout.split()]
            time.sleep(0.1)  # polling the kernel's list of the namespace's processes
        if not pids:
            return
