"""JoinGroup/SyncGroup/Heartbeat/LeaveGroup behaviour, as Kafka's classic coordinator answers."""

from __future__ import annotations

import asyncio

from samsa.coordinator import GroupConfig, GroupState
from samsa.errors import ErrorCode
from samsa.protocol.consumer_protocol import decode_assignment, decode_subscription

from .helpers import (
    DESCRIBE,
    LEAVE,
    Client,
    Cluster,
    async_test,
    subscription,
)


def partitions_of(client: Client) -> set[tuple[str, int]]:
    assignment = decode_assignment(client.assignment)
    return {(t, p) for t, ps in assignment.partitions.items() for p in ps}


async def stable_group(cluster: Cluster, *clients: Client) -> None:
    await asyncio.gather(*(c.join_and_sync() for c in clients))
    assert cluster.state(clients[0].group) is GroupState.STABLE


@async_test
async def test_three_members_join_and_split() -> None:
    cluster = await Cluster().start()
    clients = [Client(cluster, "g", f"c{i}") for i in range(3)]
    await stable_group(cluster, *clients)

    generations = {c.generation for c in clients}
    assert generations == {1}
    leaders = [c for c in clients if c.is_leader]
    assert len(leaders) == 1
    members = leaders[0].last_join["members"]
    assert sorted(m["member_id"] for m in members) == sorted(c.member_id for c in clients)
    assert all(decode_subscription(m["metadata"]).topics == ("t",) for m in members)
    for follower in set(clients) - set(leaders):
        assert follower.last_join["members"] == []
    owned = [partitions_of(c) for c in clients]
    assert all(len(o) == 2 for o in owned)
    assert set().union(*owned) == {("t", p) for p in range(6)}
    assert all(c.member_id.startswith(f"{c.client_id}-") for c in clients)
    assert await asyncio.gather(*(c.heartbeat() for c in clients)) == [0, 0, 0]


@async_test
async def test_member_leaves_and_the_rest_rejoin_promptly() -> None:
    cluster = await Cluster().start()
    a, b, c = (Client(cluster, "g", n, rebalance_ms=60_000) for n in "abc")
    await stable_group(cluster, a, b, c)

    resp = await c.leave()
    assert resp["error_code"] == 0
    assert [m["error_code"] for m in resp["members"]] == [0]
    assert cluster.state("g") is GroupState.PREPARING_REBALANCE
    assert await a.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
    # Both remaining members rejoin; no one waits for the 60 s rebalance timeout.
    await asyncio.gather(a.join_and_sync(), b.join_and_sync())
    assert a.generation == b.generation == 2
    assert partitions_of(a) | partitions_of(b) == {("t", p) for p in range(6)}
    assert await c.heartbeat() == ErrorCode.UNKNOWN_MEMBER_ID


@async_test
async def test_silent_member_is_removed_after_its_session_timeout() -> None:
    cluster = await Cluster().start()
    a, b = Client(cluster, "g", "a"), Client(cluster, "g", "b")
    silent = Client(cluster, "g", "dies", session_ms=200)
    await stable_group(cluster, a, b, silent)
    rebalancing = cluster.next_transition("g", GroupState.PREPARING_REBALANCE)

    await asyncio.wait_for(rebalancing, timeout=2)  # nobody heartbeats for `silent`

    assert silent.member_id not in cluster.coordinator.registry.groups["g"].members
    await asyncio.gather(a.join_and_sync(), b.join_and_sync())
    assert a.generation == 2
    assert len(partitions_of(a) | partitions_of(b)) == 6
    assert await silent.heartbeat() == ErrorCode.UNKNOWN_MEMBER_ID


@async_test
async def test_rebalance_timeout_drops_members_that_do_not_rejoin() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", rebalance_ms=150)
    b = Client(cluster, "g", "b", rebalance_ms=150)
    await stable_group(cluster, a, b)
    # `a` rejoins (as the leader would after a metadata change); `b` never does.
    join = await asyncio.wait_for(a.join(), timeout=2)
    assert join["error_code"] == 0 and join["generation_id"] == 2
    assert [m["member_id"] for m in join["members"]] == [a.member_id]


@async_test
async def test_absent_static_member_keeps_its_place_through_a_rebalance() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", rebalance_ms=150)
    b = Client(cluster, "g", "b", instance_id="ib", rebalance_ms=150)
    await stable_group(cluster, a, b)
    # Only `a` rejoins; the static `b` is kept (with its old metadata) at the timeout.
    join = await asyncio.wait_for(a.join(), timeout=2)
    assert join["error_code"] == 0 and join["generation_id"] == 2
    assert join["leader"] == a.member_id
    assert sorted(m["member_id"] for m in join["members"]) == sorted([a.member_id, b.member_id])
    assert b.member_id in cluster.coordinator.registry.groups["g"].members


@async_test
async def test_static_member_rejoins_without_rebalance() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", instance_id="ia")
    b = Client(cluster, "g", "b", instance_id="ib")
    await stable_group(cluster, a, b)
    before = partitions_of(b)
    old_id = b.member_id
    transitions = len(cluster.transitions)

    restarted = Client(cluster, "g", "b", instance_id="ib")
    join = await restarted.join()
    assert join["error_code"] == 0
    assert join["generation_id"] == 1
    assert restarted.member_id != old_id and restarted.member_id.startswith("ib-")
    sync = await restarted.sync()
    assert sync["error_code"] == 0
    assert partitions_of(restarted) == before
    assert cluster.state("g") is GroupState.STABLE
    assert len(cluster.transitions) == transitions  # no rebalance at all
    # The previous incarnation is fenced.
    assert await b.heartbeat() == ErrorCode.FENCED_INSTANCE_ID
    assert await restarted.heartbeat() == 0
    assert await a.heartbeat() == 0
    # The replacement was persisted: a reloaded coordinator knows the new id.
    reloaded = await Cluster(cluster.store).start()
    described = await reloaded.call(DESCRIBE, 5, {"groups": ["g"]})
    ids = {m["member_id"] for m in described["groups"][0]["members"]}
    assert ids == {a.member_id, restarted.member_id}


@async_test
async def test_static_leader_rejoin_v9_skips_assignment() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", instance_id="ia", version=9)
    await stable_group(cluster, a)
    again = Client(cluster, "g", "a", instance_id="ia", version=9)
    join = await again.join()
    assert join["error_code"] == 0
    assert join["leader"] == again.member_id
    assert join["skip_assignment"] is True
    assert [m["member_id"] for m in join["members"]] == [again.member_id]
    assert cluster.state("g") is GroupState.STABLE


@async_test
async def test_static_member_with_new_protocols_triggers_rebalance() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", instance_id="ia")
    await stable_group(cluster, a)
    other = [{"name": "roundrobin", "metadata": b""}, *subscription("t")]
    changed = Client(cluster, "g", "a", instance_id="ia", protocols=other)
    join = await changed.join()
    assert join["error_code"] == 0
    assert join["generation_id"] == 2
    assert join["protocol_name"] == "roundrobin"


@async_test
async def test_member_id_required_handshake() -> None:
    cluster = await Cluster().start()
    client = Client(cluster, "g", "cid", version=4)
    first = await client.join_once()
    assert first["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    assert first["member_id"].startswith("cid-")
    assert cluster.state("g") is GroupState.EMPTY
    client.member_id = first["member_id"]
    second = await client.join_once()
    assert second["error_code"] == 0
    assert second["member_id"] == first["member_id"]
    assert second["leader"] == first["member_id"]

    # v3 and older join directly, without the handshake.
    old = Client(cluster, "g2", "old", version=3)
    resp = await old.join_once()
    assert resp["error_code"] == 0 and resp["member_id"].startswith("old-")


@async_test
async def test_pending_member_that_never_returns_does_not_block_rebalance() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await stable_group(cluster, a)
    ghost = Client(cluster, "g", "ghost", session_ms=100)
    assert (await ghost.join_once())["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    join = await asyncio.wait_for(a.join(), timeout=2)  # completes once the ghost expires
    assert join["error_code"] == 0 and len(join["members"]) == 1


@async_test
async def test_first_generation_waits_for_members_still_in_the_id_handshake() -> None:
    # With a 0 ms initial delay, a member that got MEMBER_ID_REQUIRED just before
    # the first join completed must land in generation 1, not start generation 2.
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    b = Client(cluster, "g", "b")
    first_a = await a.join_once()
    first_b = await b.join_once()
    assert first_a["error_code"] == first_b["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    a.member_id, b.member_id = first_a["member_id"], first_b["member_id"]
    join_a = asyncio.ensure_future(a.join_once())
    for _ in range(10):  # let the 0 ms delay timer fire; b is still pending
        await asyncio.sleep(0)
    assert not join_a.done()
    join_b = await b.join_once()
    assert (await join_a)["generation_id"] == join_b["generation_id"] == 1
    assert len((await join_a)["members"]) + len(join_b["members"]) == 2


@async_test
async def test_inconsistent_group_protocol() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await stable_group(cluster, a)
    other_type = Client(cluster, "g", "b", protocol_type="connect")
    assert (await other_type.join())["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    no_common = Client(cluster, "g", "c", protocols=[{"name": "roundrobin", "metadata": b""}])
    assert (await no_common.join())["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    empty = Client(cluster, "g2", "d", protocols=[])
    assert (await empty.join())["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert "g2" not in cluster.coordinator.registry.groups  # no phantom group left behind
    a.last_join = {**a.last_join, "protocol_name": "roundrobin"}
    assert (await a.sync([]))["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert cluster.state("g") is GroupState.STABLE


@async_test
async def test_invalid_session_timeout() -> None:
    cluster = await Cluster().start()
    resp = await Client(cluster, "g", "a", session_ms=5).join()
    assert resp["error_code"] == ErrorCode.INVALID_SESSION_TIMEOUT
    resp = await Client(cluster, "g", "a", session_ms=2_000_000).join()
    assert resp["error_code"] == ErrorCode.INVALID_SESSION_TIMEOUT


@async_test
async def test_illegal_generation_and_unknown_member() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await stable_group(cluster, a)
    assert await a.heartbeat(generation=7) == ErrorCode.ILLEGAL_GENERATION
    assert await a.heartbeat(member_id="nobody") == ErrorCode.UNKNOWN_MEMBER_ID
    assert (
        await Client(cluster, "nope", "x").heartbeat(generation=1)
    ) == ErrorCode.UNKNOWN_MEMBER_ID

    stale = Client(cluster, "g", "a")
    stale.member_id, stale.generation, stale.last_join = a.member_id, 9, a.last_join
    assert (await stale.sync([]))["error_code"] == ErrorCode.ILLEGAL_GENERATION
    stale.member_id, stale.generation = "nobody", 1
    assert (await stale.sync([]))["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID

    assert await a.commit({("t", 0): 5}, generation=9) == {("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert await a.commit({("t", 0): 5}, member_id="nobody") == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID
    }
    # Someone outside a non-empty group cannot commit for it.
    assert await a.commit({("t", 0): 5}, generation=-1, member_id="") == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID
    }
    unknown_group = Client(cluster, "fresh", "x")
    assert await unknown_group.commit({("t", 0): 1}, generation=3, member_id="m") == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION
    }
    assert await a.commit({("t", 0): 5}) == {("t", 0): 0}


@async_test
async def test_rebalance_in_progress_for_sync_and_heartbeat() -> None:
    cluster = await Cluster().start()
    a, b = Client(cluster, "g", "a"), Client(cluster, "g", "b")
    await stable_group(cluster, a, b)
    newcomer = Client(cluster, "g", "n")
    joining = asyncio.ensure_future(newcomer.join())
    await cluster.next_transition("g", GroupState.PREPARING_REBALANCE)
    assert await b.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
    assert (await b.sync([]))["error_code"] == ErrorCode.REBALANCE_IN_PROGRESS
    # Commits with the current generation are still accepted while preparing.
    assert await b.commit({("t", 1): 10}) == {("t", 1): 0}
    await asyncio.gather(a.join_and_sync(), b.join_and_sync(), joining)
    assert (await newcomer.sync())["error_code"] == 0
    assert {a.generation, b.generation, newcomer.generation} == {2}


@async_test
async def test_leave_group_batch_by_instance_and_member_id() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", instance_id="ia")
    b = Client(cluster, "g", "b")
    await stable_group(cluster, a, b)
    resp = await cluster.call(
        LEAVE,
        3,
        {
            "group_id": "g",
            "members": [
                {"member_id": "", "group_instance_id": "ia"},
                {"member_id": b.member_id, "group_instance_id": None},
                {"member_id": "nobody", "group_instance_id": None},
                {"member_id": "wrong", "group_instance_id": "ib"},
            ],
        },
    )
    assert resp["error_code"] == 0
    assert [m["error_code"] for m in resp["members"]] == [
        0,
        0,
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.UNKNOWN_MEMBER_ID,
    ]
    assert cluster.state("g") is GroupState.EMPTY
    old = await cluster.call(LEAVE, 1, {"group_id": "g", "member_id": "nobody"})
    assert old["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


@async_test
async def test_fenced_instance_id() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", instance_id="ia")
    await stable_group(cluster, a)
    assert await a.heartbeat(member_id="ia-impostor") == ErrorCode.FENCED_INSTANCE_ID
    resp = await cluster.call(
        LEAVE, 3, {"group_id": "g", "members": [{"member_id": "x", "group_instance_id": "ia"}]}
    )
    assert resp["members"][0]["error_code"] == ErrorCode.FENCED_INSTANCE_ID


@async_test
async def test_group_max_size() -> None:
    config = GroupConfig(
        group_initial_rebalance_delay_ms=0,
        group_min_session_timeout_ms=10,
        offsets_topic_num_partitions=4,
        group_max_size=2,
    )
    cluster = await Cluster(config=config).start()
    a, b = Client(cluster, "g", "a"), Client(cluster, "g", "b")
    await stable_group(cluster, a, b)
    third = await Client(cluster, "g", "c").join()
    assert third["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert cluster.state("g") is GroupState.STABLE
    assert await a.heartbeat() == 0


@async_test
async def test_oldest_versions_complete_a_full_cycle() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", version=0)
    b = Client(cluster, "g", "b", version=2)
    await stable_group(cluster, a, b)
    assert a.generation == b.generation == 1
    assert len(partitions_of(a) | partitions_of(b)) == 6
    assert await a.commit({("t", 0): 4}, version=2) == {("t", 0): 0}
    left = await cluster.call(LEAVE, 0, {"group_id": "g", "member_id": a.member_id})
    assert left["error_code"] == 0
    await asyncio.wait_for(b.join_and_sync(), timeout=2)
    assert b.generation == 2 and len(partitions_of(b)) == 6
