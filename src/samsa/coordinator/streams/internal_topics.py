"""Configuring a topology against the cluster: partition counts of the internal topics,
co-partitioning, and which internal topics are still missing.

Kafka's InternalTopicManager with RepartitionTopics, CopartitionedTopicsEnforcer
and ChangelogTopics: a repartition topic of unset size gets the largest source
partition count of the subtopology writing it (a fix-point, since repartition
topics feed each other); topics that must be co-partitioned are forced to one
count; a changelog topic gets its subtopology's number of tasks.  The result
is ready for assignment only when every source topic exists, every internal
topic exists with the decided count, and nothing contradicts itself;
otherwise it carries the status the members are told (MISSING_SOURCE_TOPICS,
INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS with the topics the
coordinator asks the controller to create).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from samsa.coordinator.streams.topology import StreamsTopology, Subtopology, TopicInfo
from samsa.errors import ErrorCode

STALE_TOPOLOGY = 0
MISSING_SOURCE_TOPICS = 1
INCORRECTLY_PARTITIONED_TOPICS = 2
MISSING_INTERNAL_TOPICS = 3
SHUTDOWN_APPLICATION = 4
ASSIGNMENT_DELAYED = 5
"""StreamsGroupHeartbeat status codes (the response's Status.StatusCode)."""


class TopicConfigError(Exception):
    """The topology cannot be assigned yet; members get ``status`` with this message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class InvalidTopology(Exception):
    """A topology no cluster can satisfy: the heartbeat fails with STREAMS_INVALID_TOPOLOGY."""

    code = ErrorCode.STREAMS_INVALID_TOPOLOGY


@dataclass(frozen=True, slots=True)
class InternalTopic:
    """An internal topic with its decided partition count (a CreateTopics entry)."""

    name: str
    partitions: int
    replication_factor: int = -1
    """-1: the broker's default.replication.factor."""
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ConfiguredSubtopology:
    number_of_tasks: int
    source_topics: frozenset[str]
    repartition_source_topics: Mapping[str, InternalTopic]
    repartition_sink_topics: frozenset[str]
    state_changelog_topics: Mapping[str, InternalTopic]

    def input_topics(self) -> list[str]:
        return sorted(self.source_topics | set(self.repartition_source_topics))


@dataclass(frozen=True, slots=True)
class ConfiguredTopology:
    epoch: int
    subtopologies: Mapping[str, ConfiguredSubtopology] | None
    to_create: Mapping[str, InternalTopic] = field(default_factory=dict)
    error: TopicConfigError | None = None

    @property
    def is_ready(self) -> bool:
        return self.error is None and self.subtopologies is not None


def configure(topology: StreamsTopology, partitions: Mapping[str, int]) -> ConfiguredTopology:
    """Configure ``topology`` against the partition counts of the topics that exist.

    Raises ``InvalidTopology`` for a topology whose repartition topics cannot be
    sized at all (Kafka fails the heartbeat with STREAMS_INVALID_TOPOLOGY)."""
    try:
        _check_source_topics(topology, partitions)
        decided = _decide_partition_counts(topology, partitions)
        subtopologies = {
            sid: _configured(s, partitions, decided)
            for sid, s in sorted(topology.subtopologies.items())
        }
        missing = _missing_internal_topics(subtopologies, partitions)
    except TopicConfigError as exc:
        return ConfiguredTopology(topology.epoch, None, {}, exc)
    if missing:
        error = TopicConfigError(
            MISSING_INTERNAL_TOPICS, f"Internal topics are missing: [{', '.join(sorted(missing))}]"
        )
        return ConfiguredTopology(topology.epoch, subtopologies, missing, error)
    return ConfiguredTopology(topology.epoch, subtopologies)


def _check_source_topics(topology: StreamsTopology, partitions: Mapping[str, int]) -> None:
    missing = sorted(
        {t for s in topology.subtopologies.values() for t in s.source_topics if t not in partitions}
    )
    if missing:
        raise TopicConfigError(
            MISSING_SOURCE_TOPICS, f"Source topics {', '.join(missing)} are missing."
        )


def _decide_partition_counts(
    topology: StreamsTopology, partitions: Mapping[str, int]
) -> dict[str, int]:
    decided = _repartition_counts(topology, partitions)

    def count(topic: str) -> int | None:
        return partitions.get(topic, decided.get(topic))

    repartition = [t for s in topology.subtopologies.values() for t in s.repartition_source_topics]
    if repartition:
        fixed = {t.name for t in repartition if t.partitions}
        flexible = {t.name for t in repartition if not t.partitions}
        for s in topology.subtopologies.values():
            for group in s.copartitioned():
                decided.update(_copartition(group, fixed, flexible, count))
    for s in topology.subtopologies.values():
        inputs = [c for c in (count(t) for t in s.all_source_topics()) if c is not None]
        if not inputs:
            raise InvalidTopology(f"No source topics found for subtopology {s.subtopology_id}")
        sources = set(s.all_source_topics())
        for changelog in s.state_changelog_topics:
            if changelog.name not in sources:
                decided[changelog.name] = max(inputs)
    return decided


def _repartition_counts(topology: StreamsTopology, partitions: Mapping[str, int]) -> dict[str, int]:
    """RepartitionTopics.setup: explicit counts, then a fix-point over the sinks."""
    counts = {
        t.name: t.partitions
        for s in topology.subtopologies.values()
        for t in s.repartition_source_topics
        if t.partitions
    }
    while True:
        needed = progress = False
        for s in topology.subtopologies.values():
            for sink in s.repartition_sink_topics:
                if sink in counts:
                    continue
                candidates = [
                    counts[t.name] for t in s.repartition_source_topics if t.name in counts
                ]
                candidates += [partitions[t] for t in s.source_topics if t in partitions]
                if candidates:
                    counts[sink] = max(candidates)
                    progress = True
                else:
                    needed = True
        if not needed:
            break
        if not progress:
            raise InvalidTopology(
                "Failed to compute number of partitions for all repartition topics. There may"
                " be loops in the topology that cannot be resolved."
            )
    for s in topology.subtopologies.values():
        if any(t.name not in counts for t in s.repartition_source_topics):
            raise InvalidTopology(
                "Failed to compute number of partitions for all repartition topics, because a"
                " repartition source topic is never used as a sink topic."
            )
    return counts


def _copartition(
    group: frozenset[str],
    fixed: set[str],
    flexible: set[str],
    count: Callable[[str], int | None],
) -> dict[str, int]:
    """CopartitionedTopicsEnforcer.enforce for one group."""

    def known(topic: str) -> int:
        value = count(topic)
        if value is None:
            raise InvalidTopology(f"Number of partitions is not set for topic: {topic}")
        return value

    if not group:
        return {}
    repartition = {t: known(t) for t in group if t in fixed or t in flexible}
    external = {t: known(t) for t in group if t not in repartition}
    if set(repartition) == set(group):
        if fixed:
            # Kafka compares the topology's fixed repartition topics with each other.
            counts = {t: known(t) for t in fixed}
            if len(set(counts.values())) > 1:
                raise TopicConfigError(
                    INCORRECTLY_PARTITIONED_TOPICS,
                    "Following topics do not have the same number of partitions: "
                    f"[{_java_map(repartition)}]",
                )
            target = next(iter(counts.values()))
        else:
            target = max(repartition.values())
            if target == 0:
                raise InvalidTopology(
                    "All topics in the copartition group had undefined partition number: "
                    f"[{', '.join(sorted(repartition))}]"
                )
    else:
        if len(set(external.values())) > 1:
            raise TopicConfigError(
                INCORRECTLY_PARTITIONED_TOPICS,
                "Following topics do not have the same number of partitions: "
                f"[{_java_map(external)}]",
            )
        target = next(iter(external.values()))
    for topic, current in repartition.items():
        if topic in fixed and current != target:
            raise TopicConfigError(
                INCORRECTLY_PARTITIONED_TOPICS,
                f"Number of partitions [{current}] of repartition topic [{topic}] doesn't match"
                f" number of partitions [{target}] of the source topic.",
            )
    return dict.fromkeys(repartition, target)


def _java_map(counts: Mapping[str, int]) -> str:
    """A sorted map as Java's TreeMap prints it: ``{a=1, b=2}``."""
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) + "}"


def _internal(info: TopicInfo, decided: Mapping[str, int]) -> InternalTopic:
    count = info.partitions or decided.get(info.name, 0)
    return InternalTopic(
        info.name,
        count,
        info.replication_factor if info.replication_factor > 0 else -1,
        info.configs,
    )


def _configured(
    s: Subtopology, partitions: Mapping[str, int], decided: Mapping[str, int]
) -> ConfiguredSubtopology:
    repartition = {t.name: _internal(t, decided) for t in s.repartition_source_topics}
    counts = [partitions[t] for t in s.source_topics if t in partitions]
    counts += [t.partitions for t in repartition.values()]
    return ConfiguredSubtopology(
        number_of_tasks=max(counts, default=0),
        source_topics=frozenset(s.source_topics),
        repartition_source_topics=repartition,
        repartition_sink_topics=frozenset(s.repartition_sink_topics),
        state_changelog_topics={
            t.name: _internal(t, decided)
            for t in s.state_changelog_topics
            if t.name not in s.all_source_topics()
        },
    )


def _missing_internal_topics(
    subtopologies: Mapping[str, ConfiguredSubtopology], partitions: Mapping[str, int]
) -> dict[str, InternalTopic]:
    wanted: dict[str, InternalTopic] = {}
    for s in subtopologies.values():
        wanted.update(s.repartition_source_topics)
        wanted.update(s.state_changelog_topics)
    for name in sorted(wanted):
        existing = partitions.get(name)
        if existing is None:
            continue
        expected = wanted.pop(name)
        if existing != expected.partitions:
            raise TopicConfigError(
                INCORRECTLY_PARTITIONED_TOPICS,
                f"Existing topic {name} has different number of partitions: expected"
                f" {expected.partitions}, found {existing}",
            )
    return wanted
