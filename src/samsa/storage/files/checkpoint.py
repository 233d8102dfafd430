"""Kafka's offset checkpoint files (``recovery-point-offset-checkpoint``,
``log-start-offset-checkpoint``, ``replication-offset-checkpoint``).

Format, text, one item per line::

    0                      <- version
    2                      <- number of entries
    orders 0 1234          <- topic partition offset
    orders 1 99

Crash behaviour: ``write_checkpoint`` replaces the file atomically (a fsynced
``.tmp`` file renamed over it, see ``atomic_file``), so a reader sees either
the old or the new file, never a mix.  A missing file reads as empty (first
start); a malformed one raises ``CorruptCheckpointError`` and the caller falls
back to the safe choice (recover everything), as Kafka does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from samsa.storage.files.atomic_file import atomic_write, fsync_dir

__all__ = ["CorruptCheckpointError", "fsync_dir", "read_checkpoint", "write_checkpoint"]

CHECKPOINT_VERSION = 0
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"

TopicPartitionKey = tuple[str, int]


class CorruptCheckpointError(Exception):
    """A checkpoint file that is not in the expected format."""


def write_checkpoint(path: Path, offsets: Mapping[TopicPartitionKey, int]) -> None:
    """Atomically replace ``path`` with ``offsets`` (see module doc)."""
    lines = [str(CHECKPOINT_VERSION), str(len(offsets))]
    lines += [
        f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())
    ]
    atomic_write(path, ("\n".join(lines) + "\n").encode())


def read_checkpoint(path: Path) -> dict[TopicPartitionKey, int]:
    """Entries of ``path``; {} if it does not exist."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    lines = text.splitlines()
    try:
        version = int(lines[0])
        if version != CHECKPOINT_VERSION:
            raise CorruptCheckpointError(f"{path}: unknown checkpoint version {version}")
        count = int(lines[1])
        entries = lines[2:]
        if len(entries) != count:
            raise CorruptCheckpointError(
                f"{path}: expected {count} entries but found {len(entries)}"
            )
        result: dict[TopicPartitionKey, int] = {}
        for line in entries:
            topic, partition, offset = line.split(" ")
            result[(topic, int(partition))] = int(offset)
        return result
    except (IndexError, ValueError) as e:
        raise CorruptCheckpointError(f"{path}: malformed checkpoint file: {e}") from e
