"""Partition choice: Kafka's murmur2 for keys, sticky partitions for null keys.

``murmur2`` (``samsa.protocol.murmur2``) is bit-for-bit Java's ``Utils.murmur2``
(32-bit arithmetic, seed 0x9747b28c), and a keyed record goes to
``toPositive(murmur2(key)) % n`` --
the same partition the Java client and librdkafka's ``murmur2_random`` choose,
so mixed-language producers agree on where a key lives.

Records without a key follow Kafka's sticky partitioner (KIP-480): keep one
partition per topic until the accumulator has to open a new batch for it (the
batch filled, or was sent after linger.ms), then switch to another partition
with a leader, picked at random (``on_new_batch``).  Large batches instead of
many tiny ones is the whole point.  The producer reads ``sticky`` directly on
its hot path: one dict lookup per keyless record, no call.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from samsa.client.metadata import Cluster
from samsa.protocol.murmur2 import murmur2, to_positive

__all__ = ["Partitioner", "murmur2", "to_positive"]

CustomPartitioner = Callable[[str, bytes | None, list[int], list[int]], int]


class Partitioner:
    """Chooses a partition per record; ``strategy`` is a config name or a callable.

    A custom callable gets ``(topic, key_bytes, all_partitions, available_partitions)``
    and returns a partition number.
    """

    def __init__(
        self,
        strategy: str | CustomPartitioner = "default",
        ignore_keys: bool = False,
        rng: random.Random | None = None,
    ) -> None:
        self._custom = strategy if callable(strategy) else None
        self._strategy = "custom" if callable(strategy) else strategy
        self._ignore_keys = ignore_keys
        self._rng = rng or random.Random()
        # topic -> (topic, sticky partition) for keyless records
        self.sticky: dict[str, tuple[str, int]] = {}
        self._round_robin: dict[str, int] = {}

    def partition(self, topic: str, key: bytes | None, cluster: Cluster, record_size: int) -> int:
        strategy = self._strategy
        if self._custom is not None:
            ps = cluster.partitions_by_topic[topic]
            return self._custom(
                topic, key, [p.partition for p in ps], cluster.available_by_topic.get(topic, [])
            )
        if key is not None and not self._ignore_keys and strategy != "round_robin":
            return to_positive(murmur2(key)) % len(cluster.partitions_by_topic[topic])
        if strategy == "round_robin":
            return self._next_round_robin(topic, cluster)
        if strategy == "consistent_random" and key is None:
            return self._random_available(topic, cluster)
        tp = self.sticky.get(topic)
        if tp is None:
            tp = self.sticky[topic] = (topic, self._random_available(topic, cluster))
        return tp[1]

    @property
    def sticky_keyless(self) -> bool:
        """Whether keyless records use the ``sticky`` map (the default strategy)."""
        return self._strategy in ("default", "murmur2_random")

    def on_new_batch(self, topic: str, cluster: Cluster, previous: int) -> int:
        """The sticky partition's batch is done: move to another partition (KIP-480)."""
        tp = self.sticky.get(topic)
        if tp is None or tp[1] == previous:
            tp = self.sticky[topic] = (topic, self._random_available(topic, cluster, previous))
        return tp[1]

    def _random_available(self, topic: str, cluster: Cluster, previous: int | None = None) -> int:
        available = cluster.available_by_topic.get(topic) or [
            p.partition for p in cluster.partitions_by_topic[topic]
        ]
        if len(available) == 1:
            return available[0]
        choice = available[self._rng.randrange(len(available))]
        if previous is not None and choice == previous:
            choice = available[(available.index(choice) + 1) % len(available)]
        return choice

    def _next_round_robin(self, topic: str, cluster: Cluster) -> int:
        n = self._round_robin.get(topic, -1) + 1
        self._round_robin[topic] = n
        available = cluster.available_by_topic.get(topic)
        if available:
            return available[n % len(available)]
        return n % len(cluster.partitions_by_topic[topic])
