"""Topics through Admin: CreateTopics (19), DeleteTopics (20), CreatePartitions (37),
and listing and describing them from Metadata (3).

Changes go to the active controller, which applies them once and answers
when they are committed (Kafka's Admin sends them there too); listing and
describing read any broker's metadata.  Every item's error fails the call,
naming the topic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samsa.client.admin.item_errors import check_item
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.admin.results import NewTopic, PartitionDescription, TopicDescription

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS = 19, 20, 37


def create_topics(
    admin: AdminPlumbing, topics: Iterable[NewTopic], validate_only: bool, timeout_ms: int
) -> None:
    new = list(topics)
    body = {
        "topics": [
            {
                "name": t.name,
                "num_partitions": t.num_partitions,
                "replication_factor": t.replication_factor,
                "assignments": [],
                "configs": [{"name": k, "value": v} for k, v in t.configs.items()],
            }
            for t in new
        ],
        "timeout_ms": timeout_ms,
        "validate_only": validate_only,
    }
    resp = admin._call(admin._controller(timeout_ms), CREATE_TOPICS, body, timeout_ms)
    for t in resp["topics"]:
        check_item(t["error_code"], t.get("error_message"), f"create topic {t['name']!r}")


def delete_topics(admin: AdminPlumbing, topics: Iterable[str], timeout_ms: int) -> None:
    names = list(topics)
    body = {
        "topic_names": names,
        "topics": [{"name": n, "topic_id": b"\x00" * 16} for n in names],
        "timeout_ms": timeout_ms,
    }
    resp = admin._call(admin._controller(timeout_ms), DELETE_TOPICS, body, timeout_ms)
    for t in resp["responses"]:
        check_item(t["error_code"], t.get("error_message"), f"delete topic {t['name']!r}")


def list_topics(admin: AdminPlumbing, include_internal: bool, timeout_ms: int) -> set[str]:
    resp = admin._metadata(None, timeout_ms)
    return {
        t["name"]
        for t in resp["topics"]
        if t["error_code"] == 0 and (include_internal or not t.get("is_internal", False))
    }


def describe_topics(
    admin: AdminPlumbing, topics: Iterable[str], timeout_ms: int
) -> dict[str, TopicDescription]:
    resp = admin._metadata(list(topics), timeout_ms)
    out: dict[str, TopicDescription] = {}
    for t in resp["topics"]:
        check_item(t["error_code"], None, f"describe topic {t['name']!r}")
        parts = tuple(
            PartitionDescription(
                p["partition_index"],
                p["leader_id"],
                p.get("leader_epoch", -1),
                tuple(p["replica_nodes"]),
                tuple(p["isr_nodes"]),
            )
            for p in sorted(t["partitions"], key=lambda p: p["partition_index"])
        )
        out[t["name"]] = TopicDescription(
            t["name"], t.get("topic_id"), t.get("is_internal", False), parts
        )
    return out


def create_partitions(admin: AdminPlumbing, new_counts: Mapping[str, int], timeout_ms: int) -> None:
    """Grow each topic to the given total partition count."""
    body = {
        "topics": [{"name": t, "count": n, "assignments": None} for t, n in new_counts.items()],
        "timeout_ms": timeout_ms,
        "validate_only": False,
    }
    resp = admin._call(admin._controller(timeout_ms), CREATE_PARTITIONS, body, timeout_ms)
    for r in resp["results"]:
        check_item(r["error_code"], r.get("error_message"), f"create partitions {r['name']!r}")
