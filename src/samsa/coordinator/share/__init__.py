"""Share groups (KIP-932): membership and assignment of members that share partitions."""

from samsa.coordinator.share.config import ShareGroupConfig
from samsa.coordinator.share.manager import ShareGroupManager

__all__ = ["ShareGroupConfig", "ShareGroupManager"]
