"""The group coordinator: classic groups, KIP-848 consumer groups, streams groups and share-group membership.

Classic groups are here, KIP-848 consumer groups in ``consumer/``, KIP-1071
streams groups in ``streams/``, share-group membership in ``share/``.  The
broker builds one ``GroupCoordinator`` over an ``OffsetsStore`` adapter of its
log and calls one method per group API.  This
package imports only ``samsa.protocol``, ``samsa.errors`` and
``samsa.eventloop``; storage is wired in by the broker.
"""

from samsa.coordinator.config import GroupConfig
from samsa.coordinator.coordinator import (
    KEY_TYPE_GROUP,
    KEY_TYPE_TRANSACTION,
    GroupCoordinator,
    coordinator_key_type_supported,
)
from samsa.coordinator.group import GroupState
from samsa.coordinator.memory_store import MemoryOffsetsStore
from samsa.coordinator.partitioning import partition_for
from samsa.coordinator.store import OffsetsStore, Record

__all__ = [
    "KEY_TYPE_GROUP",
    "KEY_TYPE_TRANSACTION",
    "GroupConfig",
    "GroupCoordinator",
    "GroupState",
    "MemoryOffsetsStore",
    "OffsetsStore",
    "Record",
    "coordinator_key_type_supported",
    "partition_for",
]
