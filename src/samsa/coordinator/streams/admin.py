"""What the other group APIs see of streams groups: StreamsGroupDescribe, ListGroups
entries, DeleteGroups, and the member-epoch checks of OffsetCommit,
TxnOffsetCommit and OffsetFetch (Kafka's StreamsGroup.validateOffsetCommit with
KIP-1251's per-task assignment epochs, validateOffsetFetch).  What every
record-backed group answers alike is ``modern.group_admin``'s."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from samsa.coordinator.modern.group_admin import ModernGroupAdmin
from samsa.coordinator.streams import records
from samsa.coordinator.streams.assignment.assignor import NAME as ASSIGNOR_NAME
from samsa.coordinator.streams.group import StreamsGroup, StreamsMember
from samsa.coordinator.streams.internal_topics import ConfiguredTopology, InternalTopic
from samsa.coordinator.streams.manager import StreamsGroupManager
from samsa.coordinator.streams.tasks import EMPTY_TASKS, TaskSet, tasks_to_wire
from samsa.coordinator.streams.topology import TopicInfo, sorted_topic_infos
from samsa.errors import ErrorCode

Body = dict[str, Any]
TopicPartition = tuple[str, int]
GROUP_TYPE = "streams"
PROTOCOL_TYPE = "streams"
NOT_REQUESTED, NOT_STORED = 0, 1
"""TopologyDescriptionStatus values (KIP-1331)."""


class StreamsGroupAdmin(ModernGroupAdmin[StreamsGroup, StreamsGroupManager]):
    """Read views, deletion and offset checks of streams groups, for the façade."""

    group_type = GROUP_TYPE
    protocol_type = PROTOCOL_TYPE

    def _removal(self, group: StreamsGroup) -> list[records.Change]:
        return records.group_removal(group.group_id, list(group.target))

    def _listed_state(self, group: StreamsGroup) -> str:
        return "not_ready" if group.state == "NotReady" else group.state.lower()

    def subscribed_topics(self, group_id: str) -> frozenset[str]:
        """The topics a non-empty group's topology reads (their offsets may not be deleted)."""
        group = self.get(group_id)
        if group is None or not group.members or group.topology is None:
            return frozenset()
        return frozenset(
            t for s in group.topology.subtopologies.values() for t in s.all_source_topics()
        )

    # --------------------------------------------------------- offsets

    def check_commit(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        instance_id: str | None,
        partitions: Iterable[TopicPartition],
        *,
        transactional: bool,
        version: int,
    ) -> dict[TopicPartition, ErrorCode] | None:
        """None when ``group_id`` is not a streams group; else each partition's verdict."""
        group = self.get(group_id)
        if group is None:
            return None
        wanted = list(partitions)

        def every(code: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(wanted, code)

        if self.commits_unchecked(group, member_id, member_epoch, instance_id, transactional):
            return every(ErrorCode.NONE)
        member = group.members.get(member_id)
        if member is None:
            return every(ErrorCode.UNKNOWN_MEMBER_ID)
        if not transactional and version < 9:
            return every(ErrorCode.UNSUPPORTED_VERSION)
        if member_epoch == member.member_epoch:
            return every(ErrorCode.NONE)
        if member_epoch > member.member_epoch or group.topology is None:
            return every(ErrorCode.STALE_MEMBER_EPOCH)
        return {tp: _assignment_epoch_check(group, member, member_epoch, tp) for tp in wanted}

    def check_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        group = self.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return ErrorCode.NONE
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    # ----------------------------------------------------------- views

    def describe(self, group_id: str, version: int, include_description: bool) -> Body:
        """One group of a StreamsGroupDescribe (89) response."""
        group, failed = self._to_describe(group_id)
        if group is None:
            return {
                **failed,
                "group_state": "",
                "group_epoch": -1,
                "assignment_epoch": -1,
                "topology": None,
                "members": [],
                "topology_description": None,
                "topology_description_status": NOT_REQUESTED,
                "assignor_name": None,
            }
        offsets = self.manager.task_offsets.get(group_id, {})
        return {
            "error_code": 0,
            "error_message": None,
            "group_id": group_id,
            "group_state": group.state,
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "topology": _described_topology(group, self.manager.configured_now(group)),
            "members": [
                _described_member(
                    m, group.target.get(m.member_id, EMPTY_TASKS), offsets.get(m.member_id, {})
                )
                for m in group.members.values()
            ],
            "topology_description": None,
            "topology_description_status": NOT_STORED if include_description else NOT_REQUESTED,
            "assignor_name": ASSIGNOR_NAME,
        }

    def topics_of(self, group_id: str) -> list[str]:
        """Every topic a described group names (the broker checks DESCRIBE on them)."""
        group = self.get(group_id)
        if group is None or group.topology is None:
            return []
        return group.topology.all_topic_names()


def _assignment_epoch_check(
    group: StreamsGroup, member: StreamsMember, epoch: int, tp: TopicPartition
) -> ErrorCode:
    """KIP-1251: an older member epoch may commit a task's offsets only when the task was
    assigned to the member at that epoch or before, and it holds it still."""
    assert group.topology is not None
    subtopology = group.topology.subtopology_of_source(tp[0])
    if subtopology is None:
        return ErrorCode.STALE_MEMBER_EPOCH
    sid = subtopology.subtopology_id
    assigned = member.assigned.active.get(sid, {}).get(tp[1])
    if assigned is None:
        assigned = member.pending_revocation.active.get(sid, {}).get(tp[1])
    if assigned is None or epoch < assigned:
        return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE


def _topic_info(info: TopicInfo | InternalTopic) -> Body:
    if isinstance(info, InternalTopic):
        return {
            "name": info.name,
            "partitions": info.partitions,
            "replication_factor": max(info.replication_factor, 0),
            "topic_configs": [{"key": k, "value": v} for k, v in info.configs],
        }
    return info.to_wire()


def _described_topology(group: StreamsGroup, configured: ConfiguredTopology | None) -> Body | None:
    """The configured subtopologies when ready (partition counts decided), else the
    topology as the application sent it."""
    topology = group.topology
    if topology is None:
        return None
    subtopologies = []
    for sid, sub in sorted(topology.subtopologies.items()):
        conf = None
        if configured is not None and configured.is_ready and configured.subtopologies:
            conf = configured.subtopologies.get(sid)
        if conf is not None:
            repartition: list[Body] = [
                _topic_info(t) for _, t in sorted(conf.repartition_source_topics.items())
            ]
            changelogs: list[Body] = [
                _topic_info(t) for _, t in sorted(conf.state_changelog_topics.items())
            ]
        else:
            repartition = [
                _topic_info(t) for t in sorted_topic_infos(sub.repartition_source_topics)
            ]
            changelogs = [_topic_info(t) for t in sorted_topic_infos(sub.state_changelog_topics)]
        subtopologies.append(
            {
                "subtopology_id": sid,
                "source_topics": sorted(sub.source_topics),
                "repartition_sink_topics": sorted(sub.repartition_sink_topics),
                "state_changelog_topics": changelogs,
                "repartition_source_topics": repartition,
            }
        )
    return {"epoch": topology.epoch, "subtopologies": subtopologies}


def _assignment(tasks: TaskSet) -> Body:
    return {
        "active_tasks": tasks_to_wire(tasks.active),
        "standby_tasks": tasks_to_wire(tasks.standby),
        "warmup_tasks": tasks_to_wire(tasks.warmup),
    }


def _described_member(
    member: StreamsMember, target: TaskSet, offsets: dict[tuple[str, int], int]
) -> Body:
    return {
        "member_id": member.member_id,
        "member_epoch": member.member_epoch,
        "instance_id": member.instance_id,
        "rack_id": member.rack_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "topology_epoch": member.topology_epoch,
        "process_id": member.process_id,
        "user_endpoint": (
            None
            if member.user_endpoint is None
            else {"host": member.user_endpoint[0], "port": member.user_endpoint[1]}
        ),
        "client_tags": [{"key": k, "value": v} for k, v in member.client_tags],
        "task_offsets": [
            {"subtopology_id": s, "partition": p, "offset": o}
            for (s, p), o in sorted(offsets.items())
        ],
        "task_end_offsets": [],
        "assignment": _assignment(member.assigned.as_task_set()),
        "target_assignment": _assignment(target),
        "is_classic": False,
    }
