"""From a group and its configured topology to what members are told: the new target
assignment (Kafka's streams TargetAssignmentBuilder), the metadata hash that
decides when to recompute it, and the partitions behind each member's tasks
for Interactive Queries (Kafka's EndpointToPartitionsManager).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.coordinator.streams import records
from samsa.coordinator.streams.assignment.assignor import (
    AssignedMember,
    SubtopologyShape,
    TaskId,
    assign,
)
from samsa.coordinator.streams.group import StreamsGroup, StreamsMember
from samsa.coordinator.streams.internal_topics import ConfiguredSubtopology, ConfiguredTopology
from samsa.coordinator.streams.tasks import EMPTY_TASKS, TaskSet
from samsa.coordinator.streams.topology import StreamsTopology

Body = dict[str, Any]
TopicMetadata = Mapping[str, tuple[bytes, int]]
"""Topic name -> (topic id, partition count) of every topic in the cluster."""


def metadata_hash(topology: StreamsTopology, topics: TopicMetadata) -> int:
    """A hash of the topics the topology needs, as they exist now: any created,
    deleted or resized topic changes it, and with it the group epoch (Kafka hashes
    the same facts with its own function; the value is only compared with itself)."""
    digest = hashlib.blake2b(digest_size=8)
    for name in sorted(topology.required_topics()):
        found = topics.get(name)
        if found is not None:
            digest.update(name.encode() + b"\0" + bytes(found[0]) + found[1].to_bytes(4, "big"))
    value = int.from_bytes(digest.digest(), "big", signed=True)
    return value


def shapes(configured: ConfiguredTopology) -> dict[str, SubtopologyShape]:
    """The assignor's view of a ready topology: tasks per subtopology, stateful or not."""
    assert configured.subtopologies is not None
    return {
        sid: SubtopologyShape(s.number_of_tasks, bool(s.state_changelog_topics))
        for sid, s in configured.subtopologies.items()
    }


def new_target(
    group: StreamsGroup,
    members: Mapping[str, StreamsMember],
    configured: ConfiguredTopology,
    num_standby_replicas: int,
    task_offsets: Mapping[str, Mapping[TaskId, int]],
) -> dict[str, TaskSet]:
    """Every member's target: empty until the topology is ready."""
    if not configured.is_ready:
        return dict.fromkeys(members, EMPTY_TASKS)
    assigned = [
        AssignedMember(
            m.member_id,
            m.process_id,
            m.assigned.as_task_set(),
            task_offsets.get(m.member_id, {}),
        )
        for m in members.values()
    ]
    return assign(assigned, shapes(configured), num_standby_replicas)


def target_changes(
    group: StreamsGroup, target: Mapping[str, TaskSet], epoch: int, now_ms: int
) -> list[records.Change]:
    """Records of the members whose target changed, then the new assignment epoch."""
    out = [
        records.target_member(group.group_id, member_id, tasks)
        for member_id, tasks in sorted(target.items())
        if member_id not in group.target or group.target[member_id] != tasks
    ]
    out.append(records.target_epoch(group.group_id, epoch, now_ms))
    return out


def task_partitions(
    subtopology: ConfiguredSubtopology, partition: int, topics: TopicMetadata
) -> Iterable[tuple[str, int]]:
    """The input partitions of one task: partition ``partition`` of each input topic
    that has it."""
    for topic in subtopology.input_topics():
        found = topics.get(topic)
        if found is not None and partition < found[1]:
            yield topic, partition


def endpoint_partitions(
    group: StreamsGroup, configured: ConfiguredTopology | None, topics: TopicMetadata
) -> list[Body]:
    """PartitionsByUserEndpoint: for every member with an endpoint, the partitions of its
    active tasks and of its standby and warm-up tasks (one entry per member)."""
    if configured is None or configured.subtopologies is None:
        return []
    subs = configured.subtopologies
    out = []
    for member in sorted(group.members.values(), key=lambda m: m.member_id):
        if member.user_endpoint is None:
            continue
        held = member.assigned
        replicas = {
            s: held.standby.get(s, frozenset()) | held.warmup.get(s, frozenset())
            for s in {*held.standby, *held.warmup}
        }
        out.append(
            {
                "user_endpoint": {"host": member.user_endpoint[0], "port": member.user_endpoint[1]},
                "active_partitions": _by_topic(held.active_tasks(), subs, topics),
                "standby_partitions": _by_topic(replicas, subs, topics),
            }
        )
    return out


def _by_topic(
    tasks: Mapping[str, Iterable[int]],
    subs: Mapping[str, ConfiguredSubtopology],
    topics: TopicMetadata,
) -> list[Body]:
    by_topic: dict[str, set[int]] = {}
    for sid, parts in tasks.items():
        sub = subs.get(sid)
        if sub is None:
            continue
        for p in parts:
            for topic, partition in task_partitions(sub, p, topics):
                by_topic.setdefault(topic, set()).add(partition)
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(by_topic.items())]
