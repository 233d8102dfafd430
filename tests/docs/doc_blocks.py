"""The fenced blocks of the README and docs/, and the ``<!-- test: ... -->`` marker
that says how each is run (docs/README.md, "Tested examples").

A command block without a marker is an error, so a new example cannot go
untested by accident; a block's marker comes from the HTML comment on the line
right before its opening fence.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMMAND_LANGUAGES = ("sh", "bash", "shell", "console", "python")
"""Fences a user copies into a shell or an interpreter: each needs a marker."""
KINDS = ("fresh-clone", "broker", "run", "background", "skip")

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)(.*)$")
_MARKER = re.compile(r"^<!--\s*test:\s*(.*?)\s*-->\s*$")


class MarkerError(ValueError):
    """A marker that does not say one of the things docs/README.md lists."""


@dataclass(frozen=True)
class Marker:
    kind: str
    wait_for: str = ""
    """background: the text the block's output must show before the page goes on."""
    times: int = 1
    """background: how many times ``wait_for`` must appear."""
    reason: str = ""
    """skip: why the block is not run."""


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    """Line of the opening fence, 1-based."""
    language: str
    text: str
    marker: Marker | None
    marker_error: str = ""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def is_command(self) -> bool:
        return self.language in COMMAND_LANGUAGES


def parse_marker(text: str) -> Marker:
    words = shlex.split(text)
    if not words or words[0] not in KINDS:
        raise MarkerError(f"unknown marker {text!r}: one of {', '.join(KINDS)}")
    kind, rest = words[0], words[1:]
    if kind == "skip":
        if len(rest) != 1 or not rest[0].strip():
            raise MarkerError('skip needs one quoted reason: <!-- test: skip "why" -->')
        return Marker(kind, reason=rest[0])
    if kind == "background":
        if len(rest) not in (1, 2) or not rest[0] or (len(rest) == 2 and not rest[1].isdigit()):
            raise MarkerError('background needs the text to wait for: background "TEXT" [N]')
        return Marker(kind, wait_for=rest[0], times=int(rest[1]) if len(rest) == 2 else 1)
    if kind == "fresh-clone" and rest[:1] == ["background"]:
        # The README's own broker command: run on the fresh clone, in the background.
        nested = parse_marker(shlex.join(rest))
        return Marker("fresh-clone background", nested.wait_for, nested.times)
    if rest:
        raise MarkerError(f"{kind} takes nothing more, got {rest!r}")
    return Marker(kind)


def parse(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        ticks, language = fence.group(1), fence.group(2).lower()
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].startswith(ticks):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        marker: Marker | None = None
        error = ""
        previous = lines[start - 1] if start > 0 else ""
        found = _MARKER.match(previous)
        if found:
            try:
                marker = parse_marker(found.group(1))
            except MarkerError as exc:
                error = str(exc)
        blocks.append(Block(path, start + 1, language, "\n".join(body) + "\n", marker, error))
    return blocks


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def all_blocks() -> list[Block]:
    return [block for path in doc_files() for block in parse(path)]
