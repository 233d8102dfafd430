"""KIP-1071 streams groups: the coordinator assigns Kafka Streams tasks and creates their internal topics.

Beside the classic and KIP-848 coordinators, over the same ``__consumer_offsets``:
a group's state is a set of records (``samsa.protocol.internal_records.streams_group_records``)
replayed into ``StreamsGroup``; ``StreamsGroupManager`` turns heartbeats into
records, writes them and only then applies them.  The topology the first
member sends is configured against the cluster (``internal_topics``), tasks are
spread by the sticky assignor (``assignor``) and handed over without a task
ever running twice (``reconciliation``).  Committed offsets stay with the
classic registry, which already persists and expires them.
"""

from samsa.coordinator.streams.admin import StreamsGroupAdmin
from samsa.coordinator.streams.config import StreamsGroupConfig, StreamsSettings
from samsa.coordinator.streams.heartbeat_response import HeartbeatResult
from samsa.coordinator.streams.manager import StreamsGroupManager

__all__ = [
    "HeartbeatResult",
    "StreamsGroupAdmin",
    "StreamsGroupConfig",
    "StreamsGroupManager",
    "StreamsSettings",
]
