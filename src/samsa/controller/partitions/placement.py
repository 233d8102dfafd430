"""Replica placement for new partitions: Kafka's striped, rack-aware placer.

Goals, in order (Kafka's ``StripedReplicaPlacer``): spread each partition's
replicas over as many racks as there are; spread replicas and leaders evenly
over brokers; never put two replicas of a partition on one broker.  Only active
brokers (unfenced, not shutting down) are offered here, so every replica - and
the leader, the first one - starts on a broker that can serve it.

How: racks are sorted by name (no rack sorts first) and taken round robin from
a random starting rack that moves by one per partition, which gives the
"striped" pattern (A B C, B C A, C A B).  Within a rack, brokers are also taken
round robin from a random offset that moves every partition.  After as many
partitions as there are brokers, rack and broker orders are reshuffled so large
topics do not repeat one pattern.  All randomness comes from the ``random.Random``
passed in, so a seeded generator gives the same placement every time.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from samsa.errors import ErrorCode, KafkaError


@dataclass(frozen=True, slots=True)
class UsableBroker:
    id: int
    rack: str | None = None


class _BrokerRing:
    """Brokers of one rack, handed out round robin; each placement ("epoch")
    starts one further along and hands out each broker at most once."""

    def __init__(self, brokers: list[int], rng: random.Random) -> None:
        self.brokers = sorted(brokers)
        self.offset = rng.randrange(len(self.brokers))
        self.index = 0
        self.epoch = 0

    def next(self, epoch: int) -> int:
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker

    def shuffle(self, rng: random.Random) -> None:
        rng.shuffle(self.brokers)


class _RackList:
    def __init__(self, brokers: Iterable[UsableBroker], rng: random.Random) -> None:
        by_rack: dict[str | None, list[int]] = {}
        seen: set[int] = set()
        for broker in brokers:
            if broker.id in seen:
                continue
            seen.add(broker.id)
            by_rack.setdefault(broker.rack, []).append(broker.id)
        self.rng = rng
        self.num_brokers = len(seen)
        self.rack_names = sorted(by_rack, key=lambda r: (r is not None, r or ""))
        self.racks = {name: _BrokerRing(ids, rng) for name, ids in by_rack.items()}
        self.offset = rng.randrange(len(self.rack_names)) if self.rack_names else 0
        self.epoch = 0

    def place(self, replication_factor: int) -> list[int]:
        if self.epoch == self.num_brokers and self.num_brokers > 1:
            self.rng.shuffle(self.rack_names)
            for ring in self.racks.values():
                ring.shuffle(self.rng)
            self.epoch = 0
        if self.offset >= len(self.rack_names):
            self.offset = 0
        rack_count = len(self.rack_names)
        chosen: list[int] = []
        rack_index = self.offset
        misses = 0
        while len(chosen) < replication_factor:
            broker = self.racks[self.rack_names[rack_index]].next(self.epoch)
            rack_index = (rack_index + 1) % rack_count
            if broker < 0:
                misses += 1
                if misses > rack_count:  # every rack exhausted: cannot happen if RF <= brokers
                    raise AssertionError("placement ran out of brokers")
                continue
            misses = 0
            chosen.append(broker)
        self.epoch += 1
        self.offset += 1
        return chosen


def place_replicas(
    brokers: Iterable[UsableBroker],
    num_partitions: int,
    replication_factor: int,
    rng: random.Random,
) -> list[list[int]]:
    """Replica lists (leader first) for ``num_partitions`` new partitions.

    Raises KafkaError(INVALID_REPLICATION_FACTOR) when the factor is not
    positive or larger than the number of brokers offered.
    """
    racks = _RackList(brokers, rng)
    if replication_factor <= 0:
        raise KafkaError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"replication factor must be larger than 0, got {replication_factor}",
        )
    if racks.num_brokers == 0:
        raise KafkaError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "no broker is available: all brokers are fenced or shutting down",
        )
    if replication_factor > racks.num_brokers:
        noun = "broker" if racks.num_brokers == 1 else "brokers"
        raise KafkaError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"replication factor {replication_factor} is larger than the "
            f"{racks.num_brokers} available {noun}",
        )
    return [racks.place(replication_factor) for _ in range(num_partitions)]
