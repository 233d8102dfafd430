"""Kafka's ``leader-epoch-checkpoint`` file: one per partition directory.

Format, text, one item per line (Kafka's LeaderEpochCheckpointFile)::

    0          <- version
    2          <- number of entries
    0 0        <- leader epoch, offset of the first batch written in that epoch
    3 1200

The file is the durable copy of the LeaderEpochFileCache; being Kafka's, a
Samsa partition directory stays readable by Kafka's tools and the other way
round.  Only the format lives here; what the entries mean is in
leader_epoch_cache.

Crash behaviour: ``write_leader_epoch_checkpoint`` replaces the file
atomically (atomic_file), so a reader sees the old or the new entries, never a
mix.  A missing file reads as ``None`` (the caller rebuilds from the log); an
empty file reads as no entries, as Kafka reads the empty file it creates; any
other malformed content raises ``CorruptCheckpointError``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from samsa.storage.files.atomic_file import atomic_write
from samsa.storage.files.checkpoint import CorruptCheckpointError

__all__ = [
    "LEADER_EPOCH_CHECKPOINT_FILE",
    "EpochEntry",
    "format_leader_epoch_checkpoint",
    "parse_leader_epoch_checkpoint",
    "read_leader_epoch_checkpoint",
    "write_leader_epoch_checkpoint",
]

LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
LEADER_EPOCH_CHECKPOINT_VERSION = 0


class EpochEntry(NamedTuple):
    """A leader epoch and the first offset written in it (Kafka's EpochEntry)."""

    epoch: int
    start_offset: int


def format_leader_epoch_checkpoint(entries: Iterable[EpochEntry]) -> bytes:
    """The file's bytes for ``entries`` (in the order given)."""
    items = list(entries)
    lines = [str(LEADER_EPOCH_CHECKPOINT_VERSION), str(len(items))]
    lines += [f"{epoch} {start_offset}" for epoch, start_offset in items]
    return ("\n".join(lines) + "\n").encode()


def parse_leader_epoch_checkpoint(
    text: str, where: str = "leader-epoch-checkpoint"
) -> list[EpochEntry]:
    """Entries of a checkpoint's text; raises CorruptCheckpointError.

    Lenient where Kafka's reader is (an empty file, or one with only the
    version line, holds no entries; fields may be separated by any
    whitespace), strict elsewhere: a wrong version, a count that does not
    match, a line that is not two integers."""
    lines = text.splitlines()
    if not lines:
        return []
    try:
        version = int(lines[0])
    except ValueError as e:
        raise CorruptCheckpointError(f"{where}: malformed version line {lines[0]!r}") from e
    if version != LEADER_EPOCH_CHECKPOINT_VERSION:
        raise CorruptCheckpointError(f"{where}: unknown checkpoint version {version}")
    if len(lines) == 1:
        return []
    try:
        count = int(lines[1])
    except ValueError as e:
        raise CorruptCheckpointError(f"{where}: malformed count line {lines[1]!r}") from e
    entries: list[EpochEntry] = []
    for line in lines[2:]:
        fields = line.split()
        if len(fields) != 2:
            raise CorruptCheckpointError(f"{where}: malformed entry line {line!r}")
        try:
            entries.append(EpochEntry(int(fields[0]), int(fields[1])))
        except ValueError as e:
            raise CorruptCheckpointError(f"{where}: malformed entry line {line!r}") from e
    if len(entries) != count:
        raise CorruptCheckpointError(f"{where}: expected {count} entries but found {len(entries)}")
    return entries


def read_leader_epoch_checkpoint(path: Path) -> list[EpochEntry] | None:
    """Entries of ``path``, or None if it does not exist.  Raises
    CorruptCheckpointError on malformed content (undecodable bytes included)
    and OSError when the file cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError as e:
        raise CorruptCheckpointError(f"{path}: not text: {e}") from e
    return parse_leader_epoch_checkpoint(text, str(path))


def write_leader_epoch_checkpoint(
    path: Path, entries: Iterable[EpochEntry], *, sync: bool = True
) -> None:
    """Atomically replace ``path`` with ``entries`` (see module doc and
    atomic_file for ``sync``)."""
    atomic_write(path, format_leader_epoch_checkpoint(entries), sync=sync)
