"""What the Sender may send now: which leaders have a sendable batch, and which batches go.

The RecordAccumulator owns the partition queues, their locks and their
memory; this is the policy the Sender thread applies to them each loop
(Kafka's ``RecordAccumulator.ready`` and ``drain``):

* a partition is sendable when its head batch is full, has waited linger.ms
  (or, for a retry, its backoff), or when a flush or close is under way, or
  when other threads are blocked waiting for memory (``force``); a partition
  ``muted`` (its batch in flight while ordering is guaranteed) is not;
* a drain takes at most one batch per partition, up to ``max_size`` bytes per
  broker, starting one partition further along on each drain so every
  partition of a broker gets its turn; with idempotence or transactions the
  TransactionManager may hold a batch back (``prepare_for_drain``).

Times are monotonic milliseconds passed in by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from samsa.client.metadata import Cluster
from samsa.client.producer.batch import ProducerBatch

if TYPE_CHECKING:
    from samsa.client.producer.accumulator import PartitionQueue
    from samsa.client.producer.idempotence import TransactionManager

__all__ = ["ReadyCheckResult", "drain_batches", "ready_nodes"]

TP = tuple[str, int]


@dataclass(slots=True)
class ReadyCheckResult:
    ready_nodes: set[int] = field(default_factory=set)
    next_ready_check_delay_ms: int = 2**31 - 1
    unknown_leader_topics: set[str] = field(default_factory=set)


def backoff_left(batch: ProducerBatch, now_ms: int) -> int:
    """How long a retried batch must still wait (0: not a retry, or its backoff is over)."""
    if not batch.in_retry:
        return 0
    return max(0, batch.last_attempt_ms + batch.retry_backoff_ms - now_ms)


def ready_nodes(
    queues: Mapping[TP, PartitionQueue],
    cluster: Cluster,
    now_ms: int,
    linger_ms: int,
    force: bool,
    muted: set[TP],
) -> ReadyCheckResult:
    """Nodes with sendable data, and how long until the next one might be."""
    result = ReadyCheckResult()
    for tp, q in list(queues.items()):
        dq = q.batches
        if not dq:
            continue
        leader = cluster.leaders.get(tp)
        if leader is None:
            result.unknown_leader_topics.add(tp[0])
            continue
        if leader in result.ready_nodes or tp in muted:
            continue
        with q.lock:
            if not dq:
                continue
            first = dq[0]
            full = len(dq) > 1 or first.full
            if first.in_retry:
                left = backoff_left(first, now_ms)
                if left > 0:
                    result.next_ready_check_delay_ms = min(result.next_ready_check_delay_ms, left)
                    continue
                sendable = True
            else:
                waited = now_ms - first.created_ms
                sendable = full or force or waited >= linger_ms
                if not sendable:
                    result.next_ready_check_delay_ms = min(
                        result.next_ready_check_delay_ms, linger_ms - waited
                    )
        if sendable:
            result.ready_nodes.add(leader)
    return result


def drain_batches(
    queues: Mapping[TP, PartitionQueue],
    cluster: Cluster,
    nodes: Sequence[int],
    max_size: int,
    now_ms: int,
    *,
    drain_index: dict[int, int],
    muted: set[TP],
    txn: TransactionManager | None,
) -> dict[int, list[ProducerBatch]]:
    """At most one batch per partition per node, up to ``max_size`` bytes each.

    ``drain_index`` (node -> where its next drain starts) is the caller's,
    kept from one drain to the next.
    """
    out: dict[int, list[ProducerBatch]] = {}
    for node in nodes:
        parts = cluster.partitions_by_node.get(node)
        if not parts:
            continue
        n = len(parts)
        start = drain_index.get(node, 0) % n
        drain_index[node] = (start + 1) % n
        size = 0
        ready: list[ProducerBatch] = []
        for i in range(n):
            tp = parts[(start + i) % n]
            q = queues.get(tp)
            if q is None or not q.batches or tp in muted:
                continue
            with q.lock:
                dq = q.batches
                if not dq:
                    continue
                first = dq[0]
                if backoff_left(first, now_ms) > 0:
                    continue
                if ready and size + first.size_bytes > max_size:
                    break
                first.seal()  # appends stop before the record count is used
                if txn is not None and not txn.prepare_for_drain(tp, first):
                    continue
                dq.popleft()
            first.drained_ms = now_ms
            size += first.size_bytes
            ready.append(first)
        if ready:
            out[node] = ready
    return out
