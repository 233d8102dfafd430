"""Per-partition producer state: idempotent-produce validation and its recovery.

This is Samsa's counterpart of Kafka's ProducerStateManager. The partition leader
calls :meth:`ProducerStateManager.check` before appending a batch that carries a
producer id and :meth:`ProducerStateManager.update` after appending it; recovery
calls :meth:`load` and then :meth:`replay_batch` for every batch of the log tail.

The manager is assembled from one mixin per concern, each in its own module:
producer_state_base (the entries and open transactions, loading on first use,
transaction markers), producer_state_checks (the live append path's
validation, with Kafka's rules in order) and producer_state_recovery (replay,
snapshots, truncation, expiry).  A producer's entry, the snapshot file format
and the open transactions have modules of their own (producer_state_entry,
producer_state_snapshot, open_transactions).
"""

from __future__ import annotations

from samsa.storage.producers.checks import (
    CHECK_OK,
    CheckOutcome,
    CheckResult,
    ProducerStateChecks,
)
from samsa.storage.producers.recovery import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    BatchHeaderLike,
    ProducerStateRecovery,
)
from samsa.storage.producers.state_base import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    DEFAULT_SNAPSHOTS_TO_KEEP,
)

__all__ = [
    "CHECK_OK",
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "DEFAULT_PRODUCER_ID_EXPIRATION_MS",
    "DEFAULT_SNAPSHOTS_TO_KEEP",
    "BatchHeaderLike",
    "CheckOutcome",
    "CheckResult",
    "ProducerStateManager",
]


class ProducerStateManager(ProducerStateChecks, ProducerStateRecovery):
    """Producer id -> :class:`ProducerStateEntry` for one partition, plus its snapshots.

    Not thread-safe: the partition's append path owns it. ``map_end_offset`` is the
    offset just past the last batch applied (live or replayed); it tells
    :meth:`truncate_to` whether the in-memory state covers data being removed.
    """
