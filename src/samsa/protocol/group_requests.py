"""Group request bodies built by more than one caller (the admin client, the web
console), so the fields Kafka's Admin sends are written down once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def outside_commit_request(
    group_id: str, offsets: Iterable[tuple[tuple[str, int], int]]
) -> dict[str, Any]:
    """An OffsetCommit body (v2-9) from no member: generation -1, empty member id,
    as Kafka's alterConsumerGroupOffsets sends it.  The coordinator accepts it
    only while the group has no members.  ``offsets``: ((topic, partition), next
    offset to read) pairs, as a mapping's ``items()``."""
    by_topic: dict[str, dict[int, int]] = {}
    for (topic, partition), offset in offsets:
        by_topic.setdefault(topic, {})[partition] = offset
    return {
        "group_id": group_id,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": offset,
                        "committed_leader_epoch": -1,
                        "commit_timestamp": -1,
                        "committed_metadata": "",
                    }
                    for p, offset in sorted(parts.items())
                ],
            }
            for topic, parts in sorted(by_topic.items())
        ],
    }
