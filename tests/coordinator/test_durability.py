"""State survives a reload from ``__consumer_offsets``; loading and ownership errors; store failures."""

from __future__ import annotations

import asyncio

from samsa.coordinator import (
    GroupState,
    MemoryOffsetsStore,
    coordinator_key_type_supported,
    partition_for,
)
from samsa.errors import ErrorCode
from samsa.protocol.internal_records.group_records import (
    encode_offset_commit_key,
    encode_offset_commit_value,
)

from .helpers import FETCH, HEARTBEAT, Client, Cluster, async_test, fetch_v8, offsets_of


@async_test
async def test_offsets_and_generation_survive_reload() -> None:
    cluster = await Cluster().start()
    a, b = Client(cluster, "g", "a"), Client(cluster, "g", "b")
    await asyncio.gather(a.join_and_sync(), b.join_and_sync())
    await a.commit({("t", 0): 100, ("t", 1): 101})
    await b.commit({("t", 0): 150})  # the later commit wins
    await cluster.coordinator.shutdown()

    reloaded = await Cluster(cluster.store).start()
    g = await fetch_v8(reloaded, "g", None)
    assert offsets_of(g["topics"]) == {("t", 0): 150, ("t", 1): 101}
    group = reloaded.coordinator.registry.groups["g"]
    assert group.state is GroupState.STABLE
    assert group.generation_id == 1 and group.protocol_name == "range"
    assert group.leader_id in (a.member_id, b.member_id)
    # Members carry on against the new coordinator with their generation and assignment.
    a.cluster = b.cluster = reloaded
    assert await a.heartbeat() == 0
    resync = await b.sync([])
    assert resync["error_code"] == 0 and resync["assignment"] == b.assignment
    # A new rebalance continues the generation count.
    await asyncio.gather(a.join_and_sync(), b.join_and_sync())
    assert a.generation == 2
    await reloaded.coordinator.shutdown()


@async_test
async def test_empty_group_generation_survives_reload() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await a.join_and_sync()
    await a.leave()
    await cluster.coordinator.rebalancer.drain()
    assert cluster.coordinator.registry.groups["g"].generation_id == 2

    reloaded = await Cluster(cluster.store).start()
    group = reloaded.coordinator.registry.groups["g"]
    assert group.state is GroupState.EMPTY and group.generation_id == 2
    again = Client(reloaded, "g", "a")
    await again.join_and_sync()
    assert again.generation == 3


@async_test
async def test_loaded_members_expire_if_they_never_come_back() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", session_ms=100)
    await a.join_and_sync()
    reloaded = Cluster(cluster.store)
    empty = reloaded.next_transition("g", GroupState.EMPTY)
    await reloaded.start()
    await asyncio.wait_for(empty, timeout=2)
    assert reloaded.coordinator.registry.groups["g"].members == {}


@async_test
async def test_coordinator_load_in_progress_and_not_coordinator() -> None:
    store = MemoryOffsetsStore()
    partition = partition_for("g", 4)
    store.partitions[partition] = [
        (encode_offset_commit_key("g", "t", i % 6), encode_offset_commit_value(i, -1, "", 0))
        for i in range(2500)
    ]
    cluster = Cluster(store)
    client = Client(cluster, "g", "a")
    # Before load: this broker does not coordinate the group.
    assert (await client.join())["error_code"] == ErrorCode.NOT_COORDINATOR
    loading = asyncio.ensure_future(cluster.coordinator.load(partition))
    await asyncio.sleep(0)  # one loop turn: the loader has yielded mid-partition
    assert cluster.coordinator.is_loading(partition)
    fetch = await cluster.call(FETCH, 7, {"group_id": "g", "topics": None})
    assert fetch["error_code"] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    v1 = await cluster.call(
        FETCH, 1, {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0]}]}
    )
    assert v1["topics"][0]["partitions"][0]["error_code"] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert (await client.join())["error_code"] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    # As Kafka: heartbeats pass blindly and SyncGroup says "rejoin" while loading.
    hb = await cluster.call(HEARTBEAT, 0, {"group_id": "g", "generation_id": 1, "member_id": "m"})
    assert hb["error_code"] == 0
    client.member_id, client.generation, client.last_join = "m", 1, {"leader": ""}
    assert (await client.sync([]))["error_code"] == ErrorCode.REBALANCE_IN_PROGRESS
    await loading
    g = await fetch_v8(cluster, "g", [{"name": "t", "partition_indexes": [0, 5]}])
    assert offsets_of(g["topics"]) == {("t", 0): 2496, ("t", 5): 2495}

    cluster.coordinator.unload(partition)
    assert (await client.heartbeat(generation=1, member_id="m")) == ErrorCode.NOT_COORDINATOR
    fetch = await cluster.call(FETCH, 7, {"group_id": "g", "topics": None})
    assert fetch["error_code"] == ErrorCode.NOT_COORDINATOR


@async_test
async def test_failed_group_write_sends_everyone_back_to_rejoin() -> None:
    cluster = await Cluster().start()
    a, b = Client(cluster, "g", "a"), Client(cluster, "g", "b")
    joins = await asyncio.gather(a.join(), b.join())
    assert all(j["error_code"] == 0 for j in joins)
    leader, follower = (a, b) if a.is_leader else (b, a)
    cluster.store.fail_next(ErrorCode.NOT_ENOUGH_REPLICAS)
    # The follower is already waiting when the leader's snapshot write fails.
    results = await asyncio.gather(follower.sync(), leader.sync())
    assert [r["error_code"] for r in results] == [ErrorCode.COORDINATOR_NOT_AVAILABLE] * 2
    assert cluster.state("g") is GroupState.PREPARING_REBALANCE
    await asyncio.gather(a.join_and_sync(), b.join_and_sync())
    assert cluster.state("g") is GroupState.STABLE


@async_test
async def test_failed_commit_is_not_applied() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await a.join_and_sync()
    cluster.store.fail_next(ErrorCode.MESSAGE_TOO_LARGE)
    assert await a.commit({("t", 0): 9}) == {("t", 0): ErrorCode.INVALID_COMMIT_OFFSET_SIZE}
    assert offsets_of((await fetch_v8(cluster, "g", None))["topics"]) == {}


def test_partition_for_matches_kafka() -> None:
    # Java: "test".hashCode() == 3556498; "my-group".hashCode() == -1906497762.
    assert partition_for("test", 50) == 3556498 % 50
    assert partition_for("my-group", 50) == 1906497762 % 50
    assert partition_for("grüße-😀", 50) in range(50)
    # Integer.MIN_VALUE hashes to partition 0 (Utils.abs).
    assert partition_for("polygenelubricants", 50) == 0


def test_both_coordinator_key_types_are_supported() -> None:
    assert coordinator_key_type_supported(0)
    assert coordinator_key_type_supported(1)
    assert not coordinator_key_type_supported(2)
