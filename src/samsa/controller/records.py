"""Metadata record constructors.

Records are small JSON-serialisable dicts with a ``type``; they are the only way
cluster metadata changes, so replaying them in order rebuilds the same image.
"""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


def topic_record(name: str, topic_id: bytes, partitions: int, configs: dict[str, str]) -> Record:
    return {
        "type": "topic",
        "name": name,
        "topic_id": topic_id.hex(),
        "partitions": partitions,
        "configs": dict(configs),
    }


def partitions_record(name: str, count: int) -> Record:
    return {"type": "partitions", "name": name, "count": count}


def topic_config_record(name: str, configs: dict[str, str]) -> Record:
    """The full set of a topic's config overrides after a change."""
    return {"type": "topic_config", "name": name, "configs": dict(configs)}


def remove_topic_record(name: str) -> Record:
    return {"type": "remove_topic", "name": name}


def producer_ids_record(next_block_start: int) -> Record:
    """Reserves producer ids below ``next_block_start`` so they are never handed out again."""
    return {"type": "producer_ids", "next_block_start": next_block_start}
