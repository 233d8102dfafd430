"""``HostNetwork.slow``: netem's delay, jitter, loss and duplication without netem.

An echo server runs in host 2's namespace and a client in the root namespace
times round trips to it: fast before, at least the delay while host 2 is slowed,
fast again once healed; a megabyte sent through 20% loss and 50% duplicated
packets comes back intact (TCP repairs both), and ``packet_delay`` counted what
it did.  No broker: this is the fault itself, which the nemesis then applies
to a cluster.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from tests.netfaults.network import HostNetwork

pytestmark = pytest.mark.integration

PORT = 7777
ECHO = """
import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("0.0.0.0", int(sys.argv[1])))
server.listen()
print("listening", flush=True)
while True:
    conn, _ = server.accept()
    while data := conn.recv(65536):
        conn.sendall(data)
    conn.close()
"""


@pytest.fixture
def echo(host_network: HostNetwork) -> Iterator[str]:
    argv = [*host_network.command_prefix(2), sys.executable, "-c", ECHO, str(PORT)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
        yield host_network.address(2)
    finally:
        proc.kill()
        proc.wait(10)


def _round_trips(address: str, count: int = 7) -> float:
    """Median seconds for a small message to come back."""
    with socket.create_connection((address, PORT), timeout=10) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        times = []
        for _ in range(count):
            started = time.monotonic()
            conn.sendall(b"ping")
            assert conn.recv(16) == b"ping"
            times.append(time.monotonic() - started)
    return statistics.median(times)


def _echoed(address: str, payload: bytes) -> bytes:
    with socket.create_connection((address, PORT), timeout=30) as conn:
        conn.sendall(payload)
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_delay_and_jitter_hold_back_what_a_host_sends(host_network: HostNetwork, echo: str) -> None:
    assert _round_trips(echo) < 0.05
    host_network.slow(2, delay_ms=150, jitter_ms=20)
    slowed = _round_trips(echo)
    host_network.heal()
    healed = _round_trips(echo)
    assert 0.125 <= slowed < 1.0, slowed
    assert healed < 0.05, healed
    [counts] = host_network.injected
    delayed = int(counts.split("delayed=")[1].split()[0])
    assert delayed >= 7, counts


def test_loss_and_duplicates_are_repaired_by_tcp(host_network: HostNetwork, echo: str) -> None:
    payload = os.urandom(1 << 20)
    host_network.slow(2, delay_ms=5, jitter_ms=5, loss=20, duplicate=50)
    try:
        assert _echoed(echo, payload) == payload
    finally:
        host_network.heal()
    [counts] = host_network.injected
    fields = dict(field.split("=") for field in counts.split(": ", 1)[1].split())
    assert int(fields["dropped"]) > 0, counts
    assert int(fields["duplicated"]) > 0, counts
