"""KIP-848 consumer groups: the coordinator assigns, members heartbeat, nobody stops.

Beside the classic coordinator and over the same ``__consumer_offsets``: a
group's state is a set of records (``samsa.protocol.internal_records.consumer_group_records``)
replayed into ``ConsumerGroup``; ``ConsumerGroupManager`` turns heartbeats into
records, writes them, and only then applies them.  Committed offsets stay with
the classic registry, which already persists and expires them.
"""

from samsa.coordinator.consumer.config import ConsumerGroupConfig
from samsa.coordinator.consumer.manager import ConsumerGroupManager

__all__ = ["ConsumerGroupConfig", "ConsumerGroupManager"]
