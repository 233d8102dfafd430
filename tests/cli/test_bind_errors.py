"""A port that cannot be bound ends ``samsa broker`` with one line, not a traceback.

Each case runs the real command as a subprocess while this test holds the port,
as another program would: the exit status is 2 (a configuration error) and the
last line names what was being bound, the address and the operating system's
reason.  ``examples/cluster/run.sh`` names the node that could not start.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port another process listens on for the whole test."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def run_broker(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "samsa.cli", "broker", "--data-dir", str(data_dir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("flag", "what"),
    [
        ("--listen", "listener PLAINTEXT"),
        ("--metrics-listen", "the metrics endpoint (metrics.listen)"),
        ("--console-listen", "the console endpoint (console.listen)"),
    ],
)
def test_a_busy_port_is_one_line_naming_the_listener_address_and_reason(
    tmp_path: Path, busy_port: int, flag: str, what: str
) -> None:
    address = f"127.0.0.1:{busy_port}"
    others = [] if flag == "--listen" else ["--listen", "127.0.0.1:0"]
    result = run_broker(tmp_path / "data", *others, flag, address)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last == f"samsa: error: cannot bind {what} to {address}: Address already in use"


def test_a_busy_metrics_port_leaves_the_logs_as_cleanly_closed_as_it_found_them(
    tmp_path: Path, busy_port: int
) -> None:
    """The logs load in a thread while the HTTP endpoints bind: a start that ends
    on a busy port closes what it opened, so the next start has nothing to recover."""
    from samsa.storage.log_dirs import LogDirs
    from samsa.storage.log_manager import CLEAN_SHUTDOWN_FILE
    from samsa.storage.topic_config.log_config import LogConfig

    data = tmp_path / "data"
    logs = LogDirs.open([data], LogConfig())
    logs.managers[0].create_log("orders", 0)
    logs.close()
    assert (data / CLEAN_SHUTDOWN_FILE).exists()
    result = run_broker(
        data, "--listen", "127.0.0.1:0", "--metrics-listen", f"127.0.0.1:{busy_port}"
    )
    assert result.returncode == 2, result.stderr
    assert (data / CLEAN_SHUTDOWN_FILE).exists()
    assert (data / "orders-0").is_dir()


def test_an_unresolvable_listener_host_is_one_line(tmp_path: Path) -> None:
    result = run_broker(tmp_path / "data", "--listen", "no-such-host.invalid:0")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("samsa: error: cannot bind listener PLAINTEXT to no-such-host.invalid:0")


def consecutive_free_ports(count: int) -> int:
    """The first of ``count`` consecutive loopback ports that are free now (below
    the ephemeral range, where tests' port-0 listeners never land)."""
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(20000, 32000 - count)
        held: list[socket.socket] = []
        try:
            for port in range(base, base + count):
                sock = socket.socket()
                held.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
    raise AssertionError(f"no {count} consecutive free ports found")


def test_cluster_example_moves_its_ports_and_names_the_node_that_cannot_bind(
    tmp_path: Path,
) -> None:
    """run.sh --base-port on a copy of the example (issue 38, item 9: the ports
    were fixed in its properties files), node 2's client port held: the script
    says node 2 failed, stops nodes 1 and 3, exits non-zero."""
    example = tmp_path / "examples" / "cluster"
    example.mkdir(parents=True)
    for name in ("run.sh", "node.properties"):
        shutil.copy(REPO / "examples" / "cluster" / name, example / name)
    base = consecutive_free_ports(6)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", base + 2))  # node 2's client listener
        holder.listen()
        result = subprocess.run(
            ["bash", str(example / "run.sh"), "--base-port", str(base)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "SAMSA_PYTHON": sys.executable},
        )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"cannot bind listener PLAINTEXT to 127.0.0.1:{base + 2}" in result.stderr
    assert "run.sh: node 2 (cluster-data/node2.properties) exited with status 2" in (result.stderr)
    node3 = (tmp_path / "cluster-data" / "node3.properties").read_text()
    assert f"listeners=PLAINTEXT://127.0.0.1:{base + 4},CONTROLLER://127.0.0.1:{base + 5}" in node3
    voters = ",".join(f"{n}@127.0.0.1:{base + 2 * n - 1}" for n in (1, 2, 3))
    assert f"controller.quorum.voters={voters}" in node3


def test_cluster_example_refuses_a_bad_base_port(tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", str(REPO / "examples" / "cluster" / "run.sh"), "--base-port", "65535"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "SAMSA_PYTHON": sys.executable},
    )
    assert result.returncode == 2
    assert result.stderr.startswith("run.sh: --base-port wants a port from 1 to 65530"), (
        result.stderr
    )
