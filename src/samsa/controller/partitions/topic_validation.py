"""The rules a topic and a replica assignment must follow, shared by the
operations that create topics, add partitions and reassign them.

Topic names follow Kafka's rules with the single-node broker's messages
(INVALID_TOPIC_EXCEPTION); the refusal of a name that differs from an existing
one only in '.' versus '_' goes by ``collision_key``, which lives with the
image's index of topics by that key (``controller/image/metadata_image.py``).
A manual replica assignment must list registered brokers, each once, as many as
the topic's replication factor (INVALID_REPLICA_ASSIGNMENT, with Kafka's wording).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from samsa.controller.image.registrations import BrokerRegistration
from samsa.errors import ErrorCode, KafkaError

_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME = 249
ZERO_UUID = b"\x00" * 16


def validate_topic_name(name: str) -> None:
    """Kafka's topic name rules, with the broker's messages."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "topic name is empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"topic name cannot be {name!r}")
    if len(name) > MAX_TOPIC_NAME:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"topic name is {len(name)} characters, the limit is {MAX_TOPIC_NAME}",
        )
    if not _LEGAL.match(name):
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"topic name {name!r} has characters other than ASCII alphanumerics, '.', '_' and '-'",
        )


def validate_manual_assignment(
    broker_ids: Sequence[int],
    broker: Callable[[int], BrokerRegistration | None],
    replication_factor: int | None = None,
) -> None:
    """Raise INVALID_REPLICA_ASSIGNMENT for an empty list, an unknown broker, a broker
    listed twice, or a length other than ``replication_factor`` (when given)."""
    if not broker_ids:
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "the manual partition assignment includes an empty replica list",
        )
    seen: set[int] = set()
    for broker_id in broker_ids:
        if broker(broker_id) is None:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"the manual partition assignment includes broker {broker_id}, but no such "
                "broker is registered",
            )
        if broker_id in seen:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"the manual partition assignment includes broker {broker_id} more than once",
            )
        seen.add(broker_id)
    if replication_factor is not None and len(broker_ids) != replication_factor:
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"the manual partition assignment includes a partition with {len(broker_ids)} "
            f"replica(s), but this is not consistent with previous partitions, which have "
            f"{replication_factor} replica(s)",
        )


def new_topic_id(rng: random.Random, taken: Callable[[bytes], bool]) -> bytes:
    """A random topic id, never the zero uuid nor one in use."""
    while True:
        topic_id = rng.getrandbits(128).to_bytes(16, "big")
        if topic_id != ZERO_UUID and not taken(topic_id):
            return topic_id
