"""Test helpers: real Samsa brokers and clusters as processes on loopback, Apache Kafka beside them.

``BrokerProcess`` starts ``python -m samsa.cli broker --listen 127.0.0.1:0`` in
a data dir, waits for its readiness line (no sleeps), and stops it with SIGTERM
(or SIGKILL, for crash tests).  The ``samsa_broker`` pytest fixture wraps it;
register it with ``pytest_plugins = ["samsa.testing"]`` in a conftest.  Local
clusters are ``samsa.testing.cluster``, Apache Kafka nodes ``samsa.testing.kafka``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import pytest

from samsa.testing.process import LoggedProcess

READY_PREFIX = "samsa broker listening on "
CONTROLLER_READY_PREFIX = "samsa controller listening on "
TASK_DUMP_END = "SIGUSR1: end of the task dump"  # the broker's last line after SIGUSR1

# Fast settings for tests on one node (documented in docs/running-a-broker.md).
TEST_SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.streams.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.num.partitions": "4",
    "log.flush.offset.checkpoint.interval.ms": "1000",
}


class BrokerDidNotStop(AssertionError):
    """A SIGTERMed broker still ran after the wait: a shutdown that hangs is a bug."""


class BrokerProcess(LoggedProcess):
    def __init__(
        self,
        data_dir: Path,
        settings: dict[str, str] | None = None,
        *,
        port: int | None = 0,
        args: list[str] | None = None,
        command_prefix: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.data_dir = Path(data_dir)
        self.command_prefix = list(command_prefix or [])
        """Run the broker under this, e.g. ``["ip", "netns", "exec", "host1"]``
        (which execs the broker, so signals still reach the broker itself)."""
        self.extra_args = list(args or [])
        """More ``samsa broker`` flags, e.g. ``["--log-format", "json"]``."""
        self.settings = dict(TEST_SETTINGS)
        self.settings.update(settings or {})
        self.port = port or 0
        self.listen = port is not None
        """False: the listeners come from ``settings`` (a cluster node)."""
        self.bootstrap = ""

    def launch(self) -> threading.Event:
        """Start the process without waiting; the event is set once it is ready
        (or has exited).  Cluster nodes are launched together, then waited for:
        none of them can be ready before a quorum of them runs."""
        cmd = [
            *self.command_prefix,
            sys.executable,
            "-m",
            "samsa.cli",
            "broker",
            "--data-dir",
            str(self.data_dir),
        ]
        if self.listen:
            cmd += ["--listen", f"127.0.0.1:{self.port}"]
        for key, value in self.settings.items():
            cmd += ["--set", f"{key}={value}"]
        cmd += self.extra_args
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        ready = threading.Event()
        self.bootstrap = ""
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        threading.Thread(target=self._pump_stdout, args=(ready,), daemon=True).start()
        return ready

    def start(self, timeout: float = 20.0) -> str:
        return self.wait_ready(self.launch(), timeout)

    def wait_ready(self, ready: threading.Event, timeout: float = 20.0) -> str:
        if not ready.wait(timeout):
            self.kill()
            raise RuntimeError("broker did not become ready:\n" + "\n".join(self.log_lines[-40:]))
        if not self.bootstrap:
            raise RuntimeError("broker exited during start:\n" + "\n".join(self.log_lines[-40:]))
        if self.listen:
            self.port = int(self.bootstrap.rsplit(":", 1)[1])
        return self.bootstrap

    def _pump_stdout(self, ready: threading.Event) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self._add_log_line(line)
            for prefix in (READY_PREFIX, CONTROLLER_READY_PREFIX):
                if line.startswith(prefix):
                    self.bootstrap = line[len(prefix) :].strip()
                    ready.set()
        ready.set()

    def _pump_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self._add_log_line(line.rstrip("\n"))

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait: a clean shutdown that must exit 0."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise BrokerDidNotStop(self._stuck_report(timeout)) from None

    def _stuck_report(self, timeout: float) -> str:
        """What a broker that ignores SIGTERM is waiting on: SIGUSR1 makes it log
        every asyncio task's stack; then it is killed so the test run goes on."""
        assert self.proc is not None
        seen = len(self.log_lines)
        self.proc.send_signal(signal.SIGUSR1)
        with self._log_changed:
            self._log_changed.wait_for(
                lambda: any(TASK_DUMP_END in line for line in self.log_lines[seen:]), 5.0
            )
        self.kill()
        tail = "\n".join(self.log_lines[-60:])
        return f"broker in {self.data_dir} did not exit within {timeout} s of SIGTERM:\n{tail}"

    def restart(self) -> str:
        self.stop()
        return self.start()

    def __enter__(self) -> Self:
        """Started for the block (a module's broker fixture: ``with BrokerProcess(...) as
        proc: yield proc``)."""
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """A clean stop that must exit 0, then a kill for whatever is left."""
        self.stop()
        self.kill()


@pytest.fixture
def samsa_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A fresh broker in a temporary data dir; yields the BrokerProcess (``.bootstrap``)."""
    broker = BrokerProcess(tmp_path / "samsa-data")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop() if broker.proc and broker.proc.poll() is None else None
        broker.kill()
