"""ShareGroupHeartbeat and ShareGroupDescribe: membership of share groups (KIP-932).

A share member joins with epoch 0 and a client-generated member id, heartbeats
with the epoch it was last given and leaves with epoch -1.  Every change of
membership, subscriptions or topic metadata bumps the group epoch and
recomputes the target at once: members of a share group share partitions, so
no member has to give one up before another gets it, and each member simply
takes the group's assignment epoch with its new partitions.

Members are removed after ``group.share.session.timeout.ms`` without a
heartbeat; the records they had acquired go back to the others when their
acquisition locks expire on the partition leaders.  Membership is kept in the
coordinator's memory: after a coordinator fail-over members get
UNKNOWN_MEMBER_ID and rejoin with epoch 0, which the clients do on their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from samsa.coordinator.consumer.heartbeat_request import error_response
from samsa.coordinator.modern.errors import GroupError
from samsa.coordinator.modern.timers import Deadline, MemberTimers
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.share.assignor import share_assignment
from samsa.coordinator.share.config import ShareGroupConfig
from samsa.coordinator.share.group import ShareGroup, ShareMember
from samsa.errors import ErrorCode
from samsa.protocol.internal_records.consumer_group_records import assignment_to_wire

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]
TopicLookup = Callable[[], Mapping[str, tuple[bytes, int]]]
LEAVE_GROUP_MEMBER_EPOCH = -1
ASSIGNOR_NAME = "simple"


class ShareGroupManager:
    """Every share group of the ``__consumer_offsets`` partitions this coordinator owns."""

    def __init__(
        self,
        registry: GroupRegistry,
        config: ShareGroupConfig,
        topics: TopicLookup,
        in_use_elsewhere: Callable[[str], bool] = lambda group_id: False,
    ) -> None:
        self.registry = registry
        self.config = config
        self.topics = topics
        self.in_use_elsewhere = in_use_elsewhere
        """True when a classic or consumer group already has this id."""
        self.groups: dict[str, ShareGroup] = {}
        self.timers = MemberTimers(self._expired)

    # ----------------------------------------------------------- heartbeat

    def heartbeat(self, req: Body, *, client_id: str = "", client_host: str = "") -> Body:
        """ShareGroupHeartbeat (76); runs to completion on the event loop, so no lock."""
        try:
            return self._heartbeat(req, client_id, client_host)
        except GroupError as exc:
            return error_response(exc.code, exc.message)

    def _heartbeat(self, req: Body, client_id: str, client_host: str) -> Body:
        group_id: str = req["group_id"]
        member_id: str = req["member_id"] or ""
        epoch: int = req["member_epoch"]
        if not group_id:
            raise GroupError(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if not member_id:
            raise GroupError(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if epoch == 0 and not req.get("subscribed_topic_names"):
            raise GroupError(
                ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."
            )
        if epoch < LEAVE_GROUP_MEMBER_EPOCH:
            raise GroupError(ErrorCode.INVALID_REQUEST, f"MemberEpoch {epoch} is invalid.")
        error = self.registry.check(group_id)
        if error is not None:
            raise GroupError(error)
        group = self.groups.get(group_id)
        if epoch == LEAVE_GROUP_MEMBER_EPOCH:
            return self._leave(group, member_id)
        if group is None:
            if self.in_use_elsewhere(group_id):
                raise GroupError(
                    ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
                )
            group = ShareGroup(group_id, self.registry.partition_for(group_id))
            self.groups[group_id] = group
        member = group.members.get(member_id)
        changed = False
        if member is None:
            if epoch != 0:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {member_id} is not a member of group {group_id}.",
                )
            if len(group.members) >= self.config.max_size:
                raise GroupError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The share group has reached its maximum capacity of"
                    f" {self.config.max_size} members.",
                )
            member = ShareMember(member_id)
            group.members[member_id] = member
            changed = True
        elif epoch not in (0, member.member_epoch):
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"Member {member_id} sent epoch {epoch}, its epoch is {member.member_epoch}.",
            )
        member.client_id, member.client_host = client_id, client_host
        if req.get("rack_id") is not None:
            member.rack_id = req["rack_id"]
        names = req.get("subscribed_topic_names")
        if names is not None and tuple(sorted(names)) != member.subscribed_topic_names:
            member.subscribed_topic_names = tuple(sorted(names))
            changed = True
        previous_epoch = member.member_epoch
        self._refresh(group, changed)
        self.timers.start(group_id, member_id, Deadline.SESSION, self.config.session_timeout_ms)
        send = epoch == 0 or member.member_epoch != previous_epoch
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": member_id,
            "member_epoch": member.member_epoch,
            "heartbeat_interval_ms": self.config.heartbeat_interval_ms,
            "assignment": (
                {"topic_partitions": assignment_to_wire(member.assignment)} if send else None
            ),
        }

    def _refresh(self, group: ShareGroup, changed: bool) -> None:
        """Bump the epoch and recompute the target when membership, subscriptions
        or the subscribed topics' partition counts changed."""
        all_topics = self.topics()
        subscriptions = {
            m.member_id: frozenset(t for t in m.subscribed_topic_names if t in all_topics)
            for m in group.members.values()
        }
        union = sorted(set().union(*subscriptions.values())) if subscriptions else []
        topics = {t: all_topics[t] for t in union}
        if not changed and topics == group.topics and group.group_epoch > 0:
            return
        group.group_epoch += 1
        group.topics = topics
        group.read_topics.update(topics)
        previous = {m.member_id: m.assignment for m in group.members.values()}
        target = share_assignment(subscriptions, topics, previous)
        for member in group.members.values():
            assignment = target.get(member.member_id, {})
            if assignment != member.assignment or member.member_epoch == 0:
                member.assignment = assignment
                member.member_epoch = group.group_epoch
        group.assignment_epoch = group.group_epoch

    def _leave(self, group: ShareGroup | None, member_id: str) -> Body:
        if group is None or member_id not in group.members:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not in the group."
            )
        self.remove_member(group, member_id)
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": member_id,
            "member_epoch": LEAVE_GROUP_MEMBER_EPOCH,
            "heartbeat_interval_ms": 0,
            "assignment": None,
        }

    def remove_member(self, group: ShareGroup, member_id: str) -> None:
        group.members.pop(member_id, None)
        self.timers.cancel(group.group_id, member_id)
        self._refresh(group, True)

    def _expired(self, group_id: str, member_id: str, kind: Deadline) -> None:
        group = self.groups.get(group_id)
        if group is not None and member_id in group.members:
            log.info("share group %s: member %s timed out, removing it", group_id, member_id)
            self.remove_member(group, member_id)

    # ------------------------------------------------------------ describe

    def describe(self, group_id: str) -> Body:
        """One ShareGroupDescribe (77) group entry."""
        error = self.registry.check(group_id)
        group = self.groups.get(group_id)
        if error is None and group is None:
            error = ErrorCode.GROUP_ID_NOT_FOUND
        if error is not None or group is None:
            return {
                "error_code": int(error or ErrorCode.GROUP_ID_NOT_FOUND),
                "error_message": f"Group {group_id} not found." if group is None else None,
                "group_id": group_id,
                "group_state": "Dead",
                "group_epoch": -1,
                "assignment_epoch": -1,
                "assignor_name": "",
                "members": [],
            }
        names = {topic_id: name for name, (topic_id, _) in self.topics().items()}
        return {
            "error_code": 0,
            "error_message": None,
            "group_id": group_id,
            "group_state": group.state,
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "assignor_name": ASSIGNOR_NAME,
            "members": [
                {
                    "member_id": m.member_id,
                    "rack_id": m.rack_id,
                    "member_epoch": m.member_epoch,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "subscribed_topic_names": list(m.subscribed_topic_names),
                    "assignment": {
                        "topic_partitions": [
                            {
                                "topic_id": topic_id,
                                "topic_name": names.get(topic_id, ""),
                                "partitions": sorted(parts),
                            }
                            for topic_id, parts in sorted(m.assignment.items())
                        ]
                    },
                }
                for m in group.members.values()
            ],
        }

    def list_entries(self) -> list[tuple[str, str]]:
        """(group id, state) of every share group, for ListGroups."""
        return [(g.group_id, g.state) for g in self.groups.values()]

    def unload(self, partition: int) -> None:
        for group_id in [g for g, grp in self.groups.items() if grp.partition == partition]:
            self.timers.cancel_group(group_id)
            del self.groups[group_id]

    def shutdown(self) -> None:
        self.timers.cancel_all()
