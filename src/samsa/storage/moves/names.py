"""The directory names of a move, as Kafka spells them (sans-I/O).

A future log lives in ``<topic>-<partition>.<uuid>-future`` (Kafka's
``LocalLog.logFutureDirName``: a random UUID without dashes), so a Kafka
broker opening the same dir finds it where it looks for one.  The name must
fit in 255 bytes: Kafka refuses a move whose future name would not
(INVALID_TOPIC_EXCEPTION, KAFKA-4893), and so does Samsa.
"""

from __future__ import annotations

import re
import uuid

from samsa.storage.files.checkpoint import TopicPartitionKey

__all__ = [
    "FUTURE_DIR_SUFFIX",
    "MAX_DIR_NAME_BYTES",
    "future_dir_name",
    "future_name_too_long",
    "parse_future_dir",
]

FUTURE_DIR_SUFFIX = "-future"
MAX_DIR_NAME_BYTES = 255
_FUTURE = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.(?P<id>[0-9a-f]{32})-future$")


def future_dir_name(topic: str, partition: int, unique: str | None = None) -> str:
    """``<topic>-<partition>.<uuid>-future`` (a new uuid unless given)."""
    unique = uuid.uuid4().hex if unique is None else unique
    return f"{topic}-{partition}.{unique}{FUTURE_DIR_SUFFIX}"


def future_name_too_long(topic: str, partition: int) -> bool:
    """Kafka's check before a move: the future dir's name must fit a file name."""
    return len(future_dir_name(topic, partition).encode()) > MAX_DIR_NAME_BYTES


def parse_future_dir(name: str) -> TopicPartitionKey | None:
    """(topic, partition) of a future log's directory name, else None."""
    found = _FUTURE.match(name)
    if found is None:
        return None
    return found.group("topic"), int(found.group("partition"))
