"""The ``replication-offset-checkpoint`` file: every partition's high watermark.

Kafka's file of the same name and format (storage/files/checkpoint.py), in the data
directory beside the recovery-point checkpoint.  Written periodically
(``replica.high.watermark.checkpoint.interval.ms``) and at shutdown, read once
at start: a partition starts with its checkpointed watermark (capped at its
log end offset), so a restarted leader does not claim as committed what it
only had in its log, and a restarted follower does not show less than it had.
A missing file means 0 for every partition (the watermark then comes back
from the leader or the ISR); an unreadable one is logged and treated so.

Crash behaviour: the file is replaced atomically, so a crash leaves the old
or the new version; an older watermark is always safe.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from samsa.storage.files.checkpoint import CorruptCheckpointError, read_checkpoint, write_checkpoint

log = logging.getLogger(__name__)

__all__ = [
    "REPLICATION_OFFSET_CHECKPOINT",
    "read_high_watermarks",
    "write_high_watermarks",
]

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"


def read_high_watermarks(data_dir: Path) -> dict[tuple[str, int], int]:
    path = Path(data_dir) / REPLICATION_OFFSET_CHECKPOINT
    try:
        return read_checkpoint(path)
    except (CorruptCheckpointError, OSError) as exc:
        log.warning("ignoring unreadable high watermark checkpoint (starting from 0): %s", exc)
        return {}


def write_high_watermarks(data_dir: Path, high_watermarks: Mapping[tuple[str, int], int]) -> None:
    write_checkpoint(Path(data_dir) / REPLICATION_OFFSET_CHECKPOINT, high_watermarks)
