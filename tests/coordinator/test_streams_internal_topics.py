"""Configuring a streams topology against the cluster's topics (after Kafka's
InternalTopicManagerTest, RepartitionTopicsTest, ChangelogTopicsTest and
CopartitionedTopicsEnforcerTest, written for Samsa)."""

from __future__ import annotations

from typing import Any

import pytest

from samsa.coordinator.streams.internal_topics import (
    INCORRECTLY_PARTITIONED_TOPICS,
    MISSING_INTERNAL_TOPICS,
    MISSING_SOURCE_TOPICS,
    InvalidTopology,
    configure,
)
from samsa.coordinator.streams.topology import StreamsTopology


def topic(name: str, partitions: int = 0, rf: int = 0) -> dict[str, Any]:
    return {"name": name, "partitions": partitions, "replication_factor": rf, "topic_configs": []}


def sub(sid: str, **fields: Any) -> dict[str, Any]:
    return {
        "subtopology_id": sid,
        "source_topics": fields.get("sources", []),
        "source_topic_regex": [],
        "state_changelog_topics": [topic(n) for n in fields.get("changelogs", [])],
        "repartition_sink_topics": fields.get("sinks", []),
        "repartition_source_topics": fields.get("repartition", []),
        "copartition_groups": fields.get("copartition", []),
    }


WORD_COUNT = StreamsTopology.from_wire(
    {
        "epoch": 0,
        "subtopologies": [
            sub("0", sources=["lines"], sinks=["app-repartition"]),
            sub("1", repartition=[topic("app-repartition")], changelogs=["app-changelog"]),
        ],
    }
)


def test_word_count_sizes_its_internal_topics_from_the_input() -> None:
    missing = configure(WORD_COUNT, {"lines": 3})
    assert missing.error is not None and missing.error.status == MISSING_INTERNAL_TOPICS
    assert missing.error.message == (
        "Internal topics are missing: [app-changelog, app-repartition]"
    )
    assert {n: t.partitions for n, t in missing.to_create.items()} == {
        "app-repartition": 3,
        "app-changelog": 3,
    }
    assert missing.to_create["app-changelog"].replication_factor == -1
    assert not missing.is_ready
    ready = configure(WORD_COUNT, {"lines": 3, "app-repartition": 3, "app-changelog": 3})
    assert ready.is_ready and ready.subtopologies is not None
    assert {s: c.number_of_tasks for s, c in ready.subtopologies.items()} == {"0": 3, "1": 3}


def test_missing_source_topics_are_named() -> None:
    configured = configure(WORD_COUNT, {})
    assert configured.error is not None
    assert configured.error.status == MISSING_SOURCE_TOPICS
    assert configured.error.message == "Source topics lines are missing."
    assert configured.subtopologies is None


def test_an_existing_internal_topic_of_the_wrong_size_is_reported() -> None:
    configured = configure(WORD_COUNT, {"lines": 3, "app-repartition": 2})
    assert configured.error is not None
    assert configured.error.status == INCORRECTLY_PARTITIONED_TOPICS
    assert "expected 3, found 2" in configured.error.message


def test_repartition_counts_follow_chains_of_subtopologies() -> None:
    topology = StreamsTopology.from_wire(
        {
            "epoch": 0,
            "subtopologies": [
                sub("2", repartition=[topic("b")], sinks=[]),
                sub("1", repartition=[topic("a")], sinks=["b"]),
                sub("0", sources=["in"], sinks=["a"]),
            ],
        }
    )
    configured = configure(topology, {"in": 5})
    assert {n: t.partitions for n, t in configured.to_create.items()} == {"a": 5, "b": 5}


def test_a_repartition_topic_nobody_writes_is_an_invalid_topology() -> None:
    topology = StreamsTopology.from_wire(
        {"epoch": 0, "subtopologies": [sub("0", repartition=[topic("orphan")])]}
    )
    with pytest.raises(InvalidTopology, match="never used as a sink topic"):
        configure(topology, {})


def test_copartitioned_sources_must_have_equal_counts() -> None:
    topology = StreamsTopology.from_wire(
        {
            "epoch": 0,
            "subtopologies": [
                sub("0", sources=["left"], sinks=["r"]),
                sub(
                    "1",
                    sources=["right"],
                    repartition=[topic("r")],
                    copartition=[
                        {
                            "source_topics": [0],
                            "source_topic_regex": [],
                            "repartition_source_topics": [0],
                        }
                    ],
                ),
            ],
        }
    )
    # The repartition topic follows the external topic it is joined with.
    configured = configure(topology, {"left": 6, "right": 2})
    assert configured.to_create["r"].partitions == 2
    fixed = StreamsTopology.from_wire(
        {
            "epoch": 0,
            "subtopologies": [
                sub("0", sources=["left"], sinks=["r"]),
                sub(
                    "1",
                    sources=["right"],
                    repartition=[topic("r", partitions=4)],
                    copartition=[
                        {
                            "source_topics": [0],
                            "source_topic_regex": [],
                            "repartition_source_topics": [0],
                        }
                    ],
                ),
            ],
        }
    )
    wrong = configure(fixed, {"left": 6, "right": 2})
    assert wrong.error is not None and wrong.error.status == INCORRECTLY_PARTITIONED_TOPICS
    assert wrong.error.message == (
        "Number of partitions [4] of repartition topic [r] doesn't match number of partitions"
        " [2] of the source topic."
    )
