"""Test hosts with a real network between them: one network namespace per node.

Loopback cannot break: every node shares one interface, so the faults that lost
acknowledged writes in published tests of Kafka-compatible systems (a leader cut
from the quorum but not from its clients, one-way links, a node that bridges two
halves) never happen on it.  ``HostNetwork`` gives each node a namespace of its
own with one veth leg on a bridge in the root namespace, where the clients run
(the bridge has an address of its own), and cuts links with nftables rules inside
the namespaces, so a fault is exactly the set of rules in place and ``heal``
removes them all.

This kernel has no ``netem`` qdisc (``tc qdisc add ... netem`` says "unknown"),
so ``slow`` does netem's work in user space: an iptables NFQUEUE rule hands what
a host sends to ``packet_delay``, running in that host's namespace, which
releases each packet after a delay with jitter, drops some and sends some twice.
Loss alone is nftables' ``numgen random`` drop.
"""

from __future__ import annotations

import itertools
import os
import select
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

IPTABLES = "iptables"
COPY_MARK = "0x5a3"
_instances = itertools.count()
"""packet_delay's mark on the copies it re-sends (its COPY_MARK)."""


class NetworkUnavailable(RuntimeError):
    """Namespaces, veth or nftables cannot be had here: the reason, for a skip."""


def _run(*argv: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip() or done.stdout.strip()}")


@dataclass
class HostNetwork:
    """Namespaces ``<prefix>h<i>`` with addresses ``10.<a>.<b>.<i>/24`` on one bridge.

    The subnet is drawn from the pid so two runs on one machine never share
    one; nothing here routes off the machine (the bridge has no uplink)."""

    hosts: list[int]
    prefix: str = field(default_factory=lambda: f"sm{os.getpid() % 100000}{next(_instances) % 10}")
    _up: list[int] = field(default_factory=list)
    _delayers: dict[int, subprocess.Popen[str]] = field(default_factory=dict)
    injected: list[str] = field(default_factory=list)
    """What each ``slow`` fault did, as ``packet_delay`` counted it."""

    def __post_init__(self) -> None:
        pid = os.getpid()
        self.subnet = f"10.{200 + pid % 50}.{(pid // 50) % 250}"
        self.bridge = f"{self.prefix}br"

    def namespace(self, host: int) -> str:
        return f"{self.prefix}h{host}"

    def address(self, host: int) -> str:
        return f"{self.subnet}.{host}"

    @property
    def root_address(self) -> str:
        """Where clients in the root namespace appear to the nodes."""
        return f"{self.subnet}.254"

    def command_prefix(self, host: int) -> list[str]:
        """argv prefix that runs a program on ``host`` (``ip netns exec`` execs
        it, so its pid is the program's and signals reach it)."""
        return ["ip", "netns", "exec", self.namespace(host)]

    def up(self) -> None:
        _run("ip", "link", "add", self.bridge, "type", "bridge")
        _run("ip", "addr", "add", f"{self.root_address}/24", "dev", self.bridge)
        _run("ip", "link", "set", self.bridge, "up")
        for host in self.hosts:
            self._add_host(host)

    def _add_host(self, host: int) -> None:
        ns, leg, peer = self.namespace(host), f"{self.prefix}v{host}", f"{self.prefix}p{host}"
        _run("ip", "netns", "add", ns)
        self._up.append(host)
        _run("ip", "link", "add", leg, "type", "veth", "peer", "name", peer)
        _run("ip", "link", "set", peer, "netns", ns)
        _run("ip", "link", "set", leg, "master", self.bridge, "up")
        _run("ip", "-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", peer)
        _run("ip", "-n", ns, "link", "set", peer, "up")
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        # One table per host holds every fault; heal() flushes its chains.
        self._nft(host, "add table inet faults")
        for hook in ("input", "output"):
            self._nft(
                host, f"add chain inet faults {hook} {{ type filter hook {hook} priority 0; }}"
            )

    def down(self) -> None:
        self._stop_delayers()
        for host in self._up:
            # Deleting the root leg removes its peer at once; a namespace's own
            # teardown is asynchronous and could leave the names taken a while.
            subprocess.run(["ip", "link", "del", f"{self.prefix}v{host}"], capture_output=True)
            subprocess.run(["ip", "netns", "del", self.namespace(host)], capture_output=True)
        self._up.clear()
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)

    def _nft(self, host: int, command: str) -> None:
        _run("ip", "netns", "exec", self.namespace(host), "nft", command)

    # Faults.  Each is rules on the sending or receiving side of one link;
    # TCP needs both directions, so a one-way cut stalls connections that
    # start on either side, which is what an asymmetric partition does.

    def drop_from(self, source: int, destination: int) -> None:
        """Packets from ``source`` to ``destination`` are lost (one way)."""
        self._nft(source, f"add rule inet faults output ip daddr {self.address(destination)} drop")

    def cut(self, a: int, b: int) -> None:
        """No packet crosses between ``a`` and ``b``, either way."""
        self.drop_from(a, b)
        self.drop_from(b, a)

    def isolate(self, host: int, from_hosts: list[int]) -> None:
        """``host`` reaches none of ``from_hosts`` (nor they it), but still
        reaches every other host and the clients in the root namespace."""
        for other in from_hosts:
            self.cut(host, other)

    def lose(self, host: int, percent: int) -> None:
        """Drop ``percent`` % of the packets ``host`` sends, at random."""
        self._nft(host, f"add rule inet faults output numgen random mod 100 < {percent} drop")

    def slow(
        self, host: int, delay_ms: int, jitter_ms: int = 0, loss: int = 0, duplicate: int = 0
    ) -> None:
        """netem's delay, jitter, loss and duplication on everything ``host`` sends."""
        ns, leg = self.namespace(host), f"{self.prefix}p{host}"
        iptables = ["ip", "netns", "exec", ns, IPTABLES]
        # Copies re-sent by packet_delay carry its mark and pass; the rest queue
        # (and pass unqueued if nothing holds the queue: --queue-bypass).
        _run(
            *iptables, "-A", "OUTPUT", "-o", leg, "-m", "mark", "--mark", COPY_MARK, "-j", "ACCEPT"
        )
        _run(
            *iptables,
            "-A",
            "OUTPUT",
            "-o",
            leg,
            "-j",
            "NFQUEUE",
            "--queue-num",
            "0",
            "--queue-bypass",
        )
        argv = [
            *self.command_prefix(host),
            sys.executable,
            str(Path(__file__).with_name("packet_delay.py")),
            f"--delay-ms={delay_ms}",
            f"--jitter-ms={jitter_ms}",
            f"--loss={loss}",
            f"--duplicate={duplicate}",
        ]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._delayers[host] = proc
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline().strip() if ready else ""
        if line != "ready":
            raise RuntimeError(f"packet_delay on host {host} did not start: {line!r}")

    def _stop_delayers(self) -> None:
        for host, proc in self._delayers.items():
            proc.terminate()
            out, _ = proc.communicate(timeout=30)
            self.injected.append(f"host {host}: {out.strip() or f'exit {proc.returncode}'}")
            subprocess.run(
                ["ip", "netns", "exec", self.namespace(host), IPTABLES, "-F", "OUTPUT"],
                capture_output=True,
            )
        self._delayers.clear()

    def heal(self) -> None:
        self._stop_delayers()
        for host in self._up:
            for hook in ("input", "output"):
                self._nft(host, f"flush chain inet faults {hook}")


def check_available() -> None:
    """Raise NetworkUnavailable naming what is missing (root, ip, nft, netns)."""
    if os.geteuid() != 0:
        raise NetworkUnavailable("network namespaces need root")
    for tool in ("ip", "nft", IPTABLES):
        if shutil.which(tool) is None:
            raise NetworkUnavailable(f"`{tool}` not found (Debian: iproute2, nftables, iptables)")
    probe = f"smprobe{os.getpid() % 100000}"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if done.returncode != 0:
        raise NetworkUnavailable(f"ip netns add failed: {done.stderr.strip()}")
    try:
        nft = subprocess.run(
            ["ip", "netns", "exec", probe, "nft", "add table inet probe"],
            capture_output=True,
            text=True,
        )
        if nft.returncode != 0:
            raise NetworkUnavailable(f"nftables unusable in a namespace: {nft.stderr.strip()}")
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)


@pytest.fixture
def host_network() -> Iterator[HostNetwork]:
    """Three hosts, 1..3, each a namespace on one bridge; skipped with the reason
    where namespaces or nftables cannot be had."""
    try:
        check_available()
    except NetworkUnavailable as missing:
        pytest.skip(str(missing))
    network = HostNetwork([1, 2, 3])
    try:
        network.up()
        yield network
    finally:
        network.down()
