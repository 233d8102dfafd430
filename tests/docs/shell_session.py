"""A page's blocks, run as a person pastes them: one bash, block after block.

``ShellSession`` keeps one ``bash`` for a page, so ``cd``, variables, an activated
venv and background jobs carry from block to block as in a terminal.  A block
is written to its stdin between an ERR trap and a sentinel line; the trap
records any command that fails (without ending the shell, as a terminal would
not end), and the sentinel carries whether one did.  Python blocks go to
``python -`` through a quoted here-document.

``Background`` starts a block that runs until stopped (a broker, the cluster
example) as its own process group, waits until its output shows a line, and
stops the whole group with SIGTERM.  Every wait is bounded and driven by the
output; the processes' output is kept for the failure message.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from tests.docs.doc_blocks import Block

BLOCK_TIMEOUT_S = 180.0
"""One block's limit: the longest (docs/cli.md) runs ten commands, each a new
interpreter that can take seconds on a loaded 2-core machine."""
START_TIMEOUT_S = 180.0
"""A background block's limit to show its line (three cluster nodes starting)."""


class DocBlockFailed(AssertionError):
    """A block's command failed, or it did not finish (or start) in time."""


def _pump(stream: object, lines: queue.Queue[str | None]) -> None:
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        lines.put(line)
    lines.put(None)


def script_of(block: Block) -> str:
    """What a person would paste for the block: the commands, or python fed its code."""
    if block.language == "python":
        return f"python - <<'__DOC_PYTHON__'\n{block.text}__DOC_PYTHON__\n"
    return block.text


class ShellSession:
    def __init__(self, cwd: Path, env: dict[str, str], prefix: Sequence[str] = ()) -> None:
        self.proc = subprocess.Popen(
            [*prefix, "bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(self.proc.stdout, self._lines), daemon=True).start()

    def run(self, block: Block, timeout: float = BLOCK_TIMEOUT_S) -> str:
        """Run one block; its output. DocBlockFailed names the block and what failed."""
        token = f"__doc_block_done_{uuid.uuid4().hex}"
        assert self.proc.stdin is not None
        self.proc.stdin.write(
            "__doc_failed=0\n"
            "trap '__doc_failed=1; echo \"[doc test] exit status $? of: $BASH_COMMAND\"' ERR\n"
            f"{script_of(block)}"
            "trap - ERR\n"
            f'echo "{token} $__doc_failed"\n'
        )
        self.proc.stdin.flush()
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise DocBlockFailed(
                    f"{block.where}: not done within {timeout:.0f} s; output:\n{''.join(out)}"
                ) from None
            if line is None:
                raise DocBlockFailed(f"{block.where}: the shell ended; output:\n{''.join(out)}")
            if token in line:  # after the block's last output, which may lack a newline
                before, _, status = line.partition(token)
                out.append(before)
                if status.split() != ["0"]:
                    raise DocBlockFailed(
                        f"{block.where}: a command failed; output:\n{''.join(out)}"
                    )
                return "".join(out)
            out.append(line)

    def close(self) -> None:
        """End the shell and every job it left running (its process group)."""
        _stop_group(self.proc, signal.SIGTERM, grace=30)


class Background:
    """A block that runs until stopped, started in its own process group."""

    def __init__(
        self, block: Block, cwd: Path, env: dict[str, str], prefix: Sequence[str] = ()
    ) -> None:
        self.block = block
        self.proc = subprocess.Popen(
            [*prefix, "bash", "-c", script_of(block)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=_pump, args=(self.proc.stdout, self._lines), daemon=True).start()

    def wait_for(self, text: str, times: int = 1, timeout: float = START_TIMEOUT_S) -> None:
        seen = 0
        deadline = time.monotonic() + timeout
        while seen < times:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise DocBlockFailed(
                    f"{self.block.where}: {text!r} seen {seen} of {times} times within "
                    f"{timeout:.0f} s; output:\n{''.join(self.output)}"
                ) from None
            if line is None:
                raise DocBlockFailed(
                    f"{self.block.where}: ended (status {self.proc.wait()}) before {text!r}; "
                    f"output:\n{''.join(self.output)}"
                )
            self.output.append(line)
            seen += text in line

    def stop(self) -> str:
        """SIGTERM to the block's processes, as Ctrl-C would; its whole output."""
        _stop_group(self.proc, signal.SIGTERM, grace=60)
        while True:
            try:
                line = self._lines.get(timeout=5)
            except queue.Empty:
                break
            if line is None:
                break
            self.output.append(line)
        return "".join(self.output)


def _stop_group(proc: subprocess.Popen[str], sig: signal.Signals, grace: float) -> None:
    if proc.stdin is not None and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    try:  # whatever is left of the group, the shell included
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(10)
