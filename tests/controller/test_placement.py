import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.controller.partitions.placement import UsableBroker, place_replicas
from samsa.errors import ErrorCode, KafkaError


def brokers(n: int, racks: int = 0) -> list[UsableBroker]:
    return [UsableBroker(b, f"r{b % racks}" if racks else None) for b in range(1, n + 1)]


def test_replicas_are_distinct_and_leaders_spread_evenly() -> None:
    placements = place_replicas(brokers(5), 100, 3, random.Random(1))
    assert all(len(set(p)) == 3 for p in placements)
    leaders = Counter(p[0] for p in placements)
    assert set(leaders) == {1, 2, 3, 4, 5}
    assert max(leaders.values()) - min(leaders.values()) <= 2
    replicas = Counter(b for p in placements for b in p)
    assert max(replicas.values()) - min(replicas.values()) <= 10


def test_rack_aware_puts_each_replica_on_a_different_rack() -> None:
    placements = place_replicas(brokers(9, racks=3), 60, 3, random.Random(2))
    rack_of = {b.id: b.rack for b in brokers(9, racks=3)}
    assert all(len({rack_of[b] for b in p}) == 3 for p in placements)


def test_more_replicas_than_racks_still_spreads_over_all_racks() -> None:
    cluster = brokers(6, racks=2)
    rack_of = {b.id: b.rack for b in cluster}
    for p in place_replicas(cluster, 30, 3, random.Random(3)):
        assert len(set(p)) == 3 and len({rack_of[b] for b in p}) == 2


def test_same_seed_same_placement() -> None:
    a = place_replicas(brokers(7, racks=2), 20, 3, random.Random(42))
    b = place_replicas(brokers(7, racks=2), 20, 3, random.Random(42))
    assert a == b


def test_replication_factor_larger_than_brokers_is_refused() -> None:
    with pytest.raises(KafkaError) as info:
        place_replicas(brokers(2), 1, 3, random.Random(0))
    assert info.value.code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert "replication factor 3 is larger than the 2 available brokers" in str(info.value)
    with pytest.raises(KafkaError, match=r"the 1 available broker$"):
        place_replicas(brokers(1), 1, 2, random.Random(0))


def test_no_brokers_or_bad_factor_refused() -> None:
    for cluster, rf in (([], 1), (brokers(3), 0)):
        with pytest.raises(KafkaError) as info:
            place_replicas(cluster, 1, rf, random.Random(0))
        assert info.value.code == ErrorCode.INVALID_REPLICATION_FACTOR


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 12),
    racks=st.integers(0, 4),
    partitions=st.integers(1, 40),
    seed=st.integers(0, 1000),
    data=st.data(),
)
def test_property_placements_are_valid(
    n: int, racks: int, partitions: int, seed: int, data: st.DataObject
) -> None:
    rf = data.draw(st.integers(1, n))
    cluster = brokers(n, racks)
    placements = place_replicas(cluster, partitions, rf, random.Random(seed))
    ids = {b.id for b in cluster}
    assert len(placements) == partitions
    for p in placements:
        assert len(p) == rf and len(set(p)) == rf and set(p) <= ids
        racks_used = {cluster[b - 1].rack for b in p}
        assert len(racks_used) == min(rf, len({b.rack for b in cluster}))
