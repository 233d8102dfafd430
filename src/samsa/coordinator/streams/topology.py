"""The topology a Kafka Streams application sends when its first member joins.

Kafka's StreamsTopology: the subtopologies, each with the external topics it
reads, the repartition topics it writes and reads (internal, created by the
coordinator), its state changelog topics (internal too) and the groups of its
source topics that must be co-partitioned.  The group keeps the topology as
the StreamsGroupTopology record holds it; ``requiredTopics`` are those whose
metadata decides the group's partition counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """An internal topic as the application describes it; 0 partitions or replication
    factor means "decide for me" (always 0 partitions for a changelog)."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_wire(cls, body: Body) -> TopicInfo:
        return cls(
            body["name"],
            body.get("partitions", 0),
            body.get("replication_factor", 0),
            tuple((c["key"], c["value"]) for c in body.get("topic_configs") or ()),
        )

    def to_wire(self) -> Body:
        return {
            "name": self.name,
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
            "topic_configs": [{"key": k, "value": v} for k, v in self.configs],
        }


@dataclass(frozen=True, slots=True)
class CopartitionGroup:
    """Indexes into the subtopology's source topics and repartition source topics."""

    source_topics: tuple[int, ...] = ()
    source_topic_regex: tuple[int, ...] = ()
    repartition_source_topics: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[CopartitionGroup, ...] = ()

    @classmethod
    def from_wire(cls, body: Body) -> Subtopology:
        return cls(
            body["subtopology_id"],
            tuple(body.get("source_topics") or ()),
            tuple(body.get("source_topic_regex") or ()),
            tuple(TopicInfo.from_wire(t) for t in body.get("state_changelog_topics") or ()),
            tuple(body.get("repartition_sink_topics") or ()),
            tuple(TopicInfo.from_wire(t) for t in body.get("repartition_source_topics") or ()),
            tuple(
                CopartitionGroup(
                    tuple(g.get("source_topics") or ()),
                    tuple(g.get("source_topic_regex") or ()),
                    tuple(g.get("repartition_source_topics") or ()),
                )
                for g in body.get("copartition_groups") or ()
            ),
        )

    def to_wire(self) -> Body:
        return {
            "subtopology_id": self.subtopology_id,
            "source_topics": list(self.source_topics),
            "source_topic_regex": list(self.source_topic_regex),
            "state_changelog_topics": [t.to_wire() for t in self.state_changelog_topics],
            "repartition_sink_topics": list(self.repartition_sink_topics),
            "repartition_source_topics": [t.to_wire() for t in self.repartition_source_topics],
            "copartition_groups": [
                {
                    "source_topics": list(g.source_topics),
                    "source_topic_regex": list(g.source_topic_regex),
                    "repartition_source_topics": list(g.repartition_source_topics),
                }
                for g in self.copartition_groups
            ],
        }

    def all_source_topics(self) -> tuple[str, ...]:
        """External and repartition source topics: a task reads one partition of each."""
        return self.source_topics + tuple(t.name for t in self.repartition_source_topics)

    def copartitioned(self) -> list[frozenset[str]]:
        """Each copartition group as the topic names it points at."""
        return [
            frozenset(
                [self.source_topics[i] for i in group.source_topics]
                + [self.repartition_source_topics[i].name for i in group.repartition_source_topics]
            )
            for group in self.copartition_groups
        ]


@dataclass(frozen=True, slots=True)
class StreamsTopology:
    epoch: int
    subtopologies: Mapping[str, Subtopology]

    @classmethod
    def from_wire(cls, body: Body) -> StreamsTopology:
        """From the Topology of a heartbeat or the StreamsGroupTopology record (same fields)."""
        subs = [Subtopology.from_wire(s) for s in body.get("subtopologies") or ()]
        return cls(body["epoch"], {s.subtopology_id: s for s in subs})

    def to_wire(self) -> Body:
        return {
            "epoch": self.epoch,
            "subtopologies": [s.to_wire() for s in self.subtopologies.values()],
        }

    def required_topics(self) -> frozenset[str]:
        """Source, repartition source and changelog topics: the ones whose metadata
        configures the group."""
        out: set[str] = set()
        for s in self.subtopologies.values():
            out.update(s.all_source_topics())
            out.update(t.name for t in s.state_changelog_topics)
        return frozenset(out)

    def subtopology_of_source(self, topic: str) -> Subtopology | None:
        """The subtopology reading ``topic`` (external or repartition source)."""
        for s in self.subtopologies.values():
            if topic in s.all_source_topics():
                return s
        return None

    def all_topic_names(self) -> list[str]:
        """Every topic the topology names, as KafkaApis lists them for its checks."""
        names: list[str] = []
        for s in self.subtopologies.values():
            names += list(s.source_topics) + list(s.repartition_sink_topics)
            names += [t.name for t in s.repartition_source_topics]
            names += [t.name for t in s.state_changelog_topics]
        return names


def topic_names_of_request(topology: Body | None) -> list[str]:
    """The topics a heartbeat's topology names (the broker checks them before the group)."""
    if topology is None:
        return []
    return StreamsTopology.from_wire(topology).all_topic_names()


def sorted_topic_infos(topics: Iterable[TopicInfo]) -> list[TopicInfo]:
    return sorted(topics, key=lambda t: t.name)
