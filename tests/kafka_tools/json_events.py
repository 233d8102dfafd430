"""A Kafka tool that reports in JSON lines (the verifiable producer and consumer),
run in the background while a test injects faults."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import Any

from samsa.testing.kafka_reference import KafkaReference

Event = dict[str, Any]


class JsonEventTool:
    """Starts the tool at once; ``wait_for`` blocks (bounded) until the events
    printed so far satisfy a condition, so a test reacts to what the tool has
    done, not to the clock."""

    def __init__(self, reference: KafkaReference, main_class: str, *args: str) -> None:
        self.events: list[Event] = []
        self.stderr_lines: list[str] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            reference.java_command(main_class, *args, quick_start=True),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        threading.Thread(target=self._pump_events, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_events(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                with self._changed:
                    self.events.append(json.loads(line))
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.rstrip("\n"))

    def named(self, name: str) -> list[Event]:
        with self._changed:
            return [event for event in self.events if event["name"] == name]

    def wait_for(self, what: str, done: Callable[[list[Event]], bool], timeout: float) -> None:
        with self._changed:
            if not self._changed.wait_for(
                lambda: done(self.events) or self.proc.poll() is not None, timeout
            ) or not done(self.events):
                tail = "\n".join(self.stderr_lines[-30:])
                raise AssertionError(f"{what}: not seen within {timeout} s\n{tail}")

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM: the tools print their final summary from a shutdown hook."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
