"""The state of one share group: members, their subscriptions and the target assignment."""

from __future__ import annotations

from dataclasses import dataclass, field

from samsa.coordinator.consumer.group import TopicMetadata
from samsa.protocol.internal_records.consumer_group_records import Assignment


@dataclass(slots=True)
class ShareMember:
    member_id: str
    member_epoch: int = 0
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    assignment: Assignment = field(default_factory=dict)


@dataclass(slots=True)
class ShareGroup:
    """``group_epoch`` bumps whenever membership, subscriptions or topic metadata
    change; the target assignment is recomputed at once (``assignment_epoch``
    catches up in the same heartbeat), since members need not revoke anything."""

    group_id: str
    partition: int
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    topics: TopicMetadata = field(default_factory=dict)
    read_topics: TopicMetadata = field(default_factory=dict)
    """Every topic the group has subscribed to since it was created: its share
    partitions keep their state (and offsets to describe) after the members leave."""

    @property
    def state(self) -> str:
        """Kafka's ShareGroupState names as ShareGroupDescribe reports them."""
        if not self.members:
            return "Empty"
        if any(m.member_epoch != self.assignment_epoch for m in self.members.values()):
            return "Reconciling"
        return "Stable"
