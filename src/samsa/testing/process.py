"""What every process a test starts has in common, Samsa's broker or Kafka's.

A test waits on what a node logs and breaks it with signals; a cluster of them
is addressed by node id.  ``LoggedProcess`` keeps the log lines and the signal
verbs, ``NodeGroup`` the per-node verbs of a cluster, so ``samsa.testing``,
``samsa.testing.cluster`` and ``samsa.testing.kafka`` behave alike by sharing
them rather than by keeping copies in step.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from typing import Generic, Protocol, Self, TypeVar


class LoggedProcess:
    """A child process whose output lines are kept, for waits and failure reports."""

    kill_wait_s = 10.0
    """How long a SIGKILLed process may take to be reaped."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.log_lines: list[str] = []
        self._log_changed = threading.Condition()

    def _add_log_line(self, line: str) -> None:
        with self._log_changed:
            self.log_lines.append(line)
            self._log_changed.notify_all()

    def wait_for_log(self, text: str, timeout: float = 10.0) -> bool:
        """Wait until a log line contains ``text`` (the process logs on its own
        schedule, so a line can arrive a moment after what it reports)."""
        with self._log_changed:
            return self._log_changed.wait_for(
                lambda: any(text in line for line in self.log_lines), timeout
            )

    def pause(self) -> None:
        """SIGSTOP: the process stops answering but keeps its sockets (a hung node)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: a crash, no flush, no clean shutdown."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(self.kill_wait_s)

    def log_text(self) -> str:
        return "\n".join(self.log_lines)


class _Node(Protocol):
    @property
    def running(self) -> bool: ...

    def kill(self) -> None: ...

    def stop(self, timeout: float = ...) -> int: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...


N = TypeVar("N", bound=_Node)


class NodeGroup(Generic[N]):
    """The fault verbs of a cluster, by node id: SIGKILL, SIGTERM, SIGSTOP/SIGCONT.
    Closing resumes paused nodes before killing them all (a stopped process
    cannot be reaped while it is stopped)."""

    nodes: dict[int, N]

    def kill(self, node_id: int) -> None:
        self.nodes[node_id].kill()

    def stop(self, node_id: int, timeout: float = 60.0) -> int:
        return self.nodes[node_id].stop(timeout)

    def pause(self, node_id: int) -> None:
        self.nodes[node_id].pause()

    def resume(self, node_id: int) -> None:
        self.nodes[node_id].resume()

    def running(self) -> list[int]:
        return [node_id for node_id, node in sorted(self.nodes.items()) if node.running]

    def close(self) -> None:
        for node in self.nodes.values():
            if node.running:
                node.resume()
        for node in self.nodes.values():
            node.kill()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
