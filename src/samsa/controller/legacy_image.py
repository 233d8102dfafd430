"""The in-memory metadata image built by replaying metadata records."""

from __future__ import annotations

from dataclasses import dataclass, field

from samsa.controller.records import Record


@dataclass
class TopicImage:
    name: str
    topic_id: bytes
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)


class MetadataImage:
    """Topics, their partitions and configs, and the producer-id high mark.

    ``replay`` is the only mutator; unknown record types are refused loudly so a
    newer log is never half-understood.
    """

    def __init__(self) -> None:
        self.topics: dict[str, TopicImage] = {}
        self.topics_by_id: dict[bytes, TopicImage] = {}
        self.next_producer_id_block = 0

    def replay(self, record: Record) -> None:
        kind = record["type"]
        if kind == "topic":
            topic = TopicImage(
                record["name"],
                bytes.fromhex(record["topic_id"]),
                int(record["partitions"]),
                dict(record["configs"]),
            )
            self.topics[topic.name] = topic
            self.topics_by_id[topic.topic_id] = topic
        elif kind == "partitions":
            self.topics[record["name"]].partitions = int(record["count"])
        elif kind == "topic_config":
            self.topics[record["name"]].configs = dict(record["configs"])
        elif kind == "remove_topic":
            removed = self.topics.pop(record["name"], None)
            if removed is not None:
                self.topics_by_id.pop(removed.topic_id, None)
        elif kind == "producer_ids":
            self.next_producer_id_block = max(
                self.next_producer_id_block, int(record["next_block_start"])
            )
        else:
            raise ValueError(f"unknown metadata record type {kind!r}")
