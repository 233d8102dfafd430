"""murmur2 must equal Java's Utils.murmur2 bit for bit (vectors from Kafka's UtilsTest)."""

from __future__ import annotations

import os
import random

from samsa.client.metadata import Cluster, Node, PartitionInfo
from samsa.client.producer.partitioner import Partitioner, murmur2, to_positive

JAVA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


def test_murmur2_matches_java_vectors() -> None:
    for data, expected in JAVA_VECTORS.items():
        assert murmur2(data) == expected, data


def test_murmur2_matches_kafka_python_on_random_keys() -> None:
    from kafka.partitioner.default import murmur2 as kp_murmur2

    rng = random.Random(7)
    for i in range(500):
        data = os.urandom(rng.randrange(0, 64)) if i else b""
        assert to_positive(murmur2(data)) == to_positive(kp_murmur2(data))


def _cluster(partitions: int, leaderless: tuple[int, ...] = ()) -> Cluster:
    return Cluster(
        [Node(1, "h", 1)],
        [
            PartitionInfo("t", p, -1 if p in leaderless else 1, 0, (1,), (1,))
            for p in range(partitions)
        ],
    )


def test_keyed_records_use_murmur2_modulo_partitions() -> None:
    part = Partitioner()
    cluster = _cluster(6)
    for key in (b"a", b"user-42", b"\x00\xff"):
        assert part.partition("t", key, cluster, 100) == to_positive(murmur2(key)) % 6


def test_sticky_partition_switches_when_its_batch_is_done() -> None:
    part = Partitioner(rng=random.Random(1))
    cluster = _cluster(4)
    first = part.partition("t", None, cluster, 400)
    assert part.partition("t", None, cluster, 400) == first
    assert part.sticky["t"] == ("t", first)
    second = part.on_new_batch("t", cluster, first)
    assert second != first and part.partition("t", None, cluster, 400) == second
    # a stale caller reporting the old partition does not move it again
    assert part.on_new_batch("t", cluster, first) == second


def test_sticky_avoids_partitions_without_leader() -> None:
    part = Partitioner(rng=random.Random(3))
    cluster = _cluster(4, leaderless=(0, 2))
    seen = {part.partition("t", None, cluster, 10)}
    for _ in range(50):
        seen.add(part.on_new_batch("t", cluster, part.partition("t", None, cluster, 10)))
    assert seen == {1, 3}


def test_round_robin_and_custom() -> None:
    cluster = _cluster(3)
    rr = Partitioner("round_robin")
    assert [rr.partition("t", b"k", cluster, 1) for _ in range(4)] == [0, 1, 2, 0]
    custom = Partitioner(lambda topic, key, all_ps, avail: len(all_ps) - 1)
    assert custom.partition("t", b"k", cluster, 1) == 2
