"""KIP-848 online migration in the coordinator, socket-free (issue 36, bug 3).

Classic members (JoinGroup/SyncGroup/Heartbeat/LeaveGroup) and consumer-protocol
members (ConsumerGroupHeartbeat) in one group: a classic group upgraded by the
first consumer-protocol member, classic members served inside the consumer
group, the group downgraded when its last consumer-protocol member leaves, and
``group.consumer.migration.policy`` honoured.  Every request and response goes
through the wire codec, state through a real (memory) store.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from samsa.coordinator import GroupState, MemoryOffsetsStore
from samsa.coordinator.consumer import ConsumerGroupConfig
from samsa.errors import ErrorCode
from samsa.protocol.consumer_protocol import decode_assignment

from .helpers import (
    CONFIG,
    CONSUMER_DESCRIBE,
    CONSUMER_HEARTBEAT,
    Client,
    Cluster,
    async_test,
)

T = b"\x01" * 16


class MixedCluster(Cluster):
    """A coordinator serving both protocols over topic ``t`` (6 partitions)."""

    def __init__(
        self, store: MemoryOffsetsStore | None = None, policy: str = "bidirectional"
    ) -> None:
        super().__init__(
            store,
            replace(CONFIG, offsets_topic_num_partitions=2),
            consumer_config=ConsumerGroupConfig(migration_policy=policy),
            topics=lambda: {"t": (T, 6)},
        )

    async def beat(
        self, member: str, epoch: int, owned: list[int] | None = None, **extra: Any
    ) -> dict[str, Any]:
        """One ConsumerGroupHeartbeat of a consumer-protocol member of group ``g``."""
        body: dict[str, Any] = {"group_id": "g", "member_id": member, "member_epoch": epoch}
        body.update(extra)
        if epoch == 0:
            body.update(
                rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], topic_partitions=[]
            )
        elif owned is not None:
            body["topic_partitions"] = [{"topic_id": T, "partitions": owned}] if owned else []
        return await self.call(CONSUMER_HEARTBEAT, 1, body)

    async def describe(self) -> dict[str, Any]:
        answer = await self.call(CONSUMER_DESCRIBE, 1, {"group_ids": ["g"]})
        group: dict[str, Any] = answer["groups"][0]
        return group

    def consumer_group_exists(self) -> bool:
        return "g" in self.coordinator.consumer.groups


def held(client: Client) -> set[int]:
    return set(decode_assignment(client.assignment).partitions.get("t", ()))


def parts(answer: dict[str, Any]) -> set[int]:
    assignment = answer["assignment"]
    assert assignment is not None, answer
    return {p for t in assignment["topic_partitions"] for p in t["partitions"]}


async def classic_group(cluster: MixedCluster, *names: str) -> list[Client]:
    """A Stable classic group of consumers ``names`` sharing ``t``."""
    clients = [Client(cluster, "g", name) for name in names]
    joins = await asyncio.gather(*(c.join() for c in clients))
    assert all(j["error_code"] == 0 for j in joins), joins
    for c in sorted(clients, key=lambda c: not c.is_leader):
        assert (await c.sync())["error_code"] == 0
    assert set().union(*(held(c) for c in clients)) == set(range(6))
    return clients


async def rejoin(client: Client) -> dict[str, Any]:
    join = await client.join()
    assert join["error_code"] == 0, join
    sync = await client.sync()
    assert sync["error_code"] == 0, sync
    return join


@async_test
async def test_a_consumer_member_upgrades_a_live_classic_group_one_member_at_a_time() -> None:
    cluster = await MixedCluster().start()
    a, b = await classic_group(cluster, "a", "b")
    generation = a.generation
    joined = await cluster.beat("m1", 0)
    assert joined["error_code"] == 0, joined
    assert cluster.consumer_group_exists()
    assert "g" not in cluster.coordinator.registry.groups or not (
        cluster.coordinator.registry.groups["g"].members
    )
    # The classic members keep their partitions at their generation until told to rejoin.
    assert await a.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
    described = await cluster.describe()
    kinds = {m["member_id"]: m["member_type"] for m in described["members"]}
    assert kinds == {a.member_id: 0, b.member_id: 0, "m1": 1}
    # Each rejoins (eager: it owns nothing any more) and syncs its share of the target.
    for client in (a, b):
        join = await rejoin(client)
        assert join["leader"] == "" and join["generation_id"] > generation
        assert await client.heartbeat() == ErrorCode.NONE
    epoch = joined["member_epoch"]
    owned: set[int] = set()
    for _ in range(5):
        answer = await cluster.beat("m1", epoch, sorted(owned))
        assert answer["error_code"] == 0, answer
        epoch = answer["member_epoch"]
        if answer["assignment"] is not None:
            owned = parts(answer)
    shares = [held(a), held(b), owned]
    assert sorted(len(s) for s in shares) == [2, 2, 2]
    assert set().union(*shares) == set(range(6))
    # Committing is checked against each member's epoch; a classic member's mismatch
    # is ILLEGAL_GENERATION, as for any classic member.
    assert await a.commit({("t", 0): 3}, version=8) == {("t", 0): 0}
    assert await a.commit({("t", 0): 3}, version=8, generation=a.generation + 7) == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION
    }


@async_test
async def test_the_group_goes_back_to_classic_when_its_last_consumer_member_leaves() -> None:
    cluster = await MixedCluster().start()
    a, b = await classic_group(cluster, "a", "b")
    joined = await cluster.beat("m1", 0)
    for client in (a, b):
        await rejoin(client)
    left = await cluster.beat("m1", -1)
    assert left["error_code"] == 0
    assert not cluster.consumer_group_exists()
    classic = cluster.coordinator.registry.groups["g"]
    assert set(classic.members) == {a.member_id, b.member_id}
    assert classic.state is GroupState.PREPARING_REBALANCE
    assert classic.generation_id >= joined["member_epoch"]
    # The classic members rebalance among themselves, as in any classic group.
    codes = await asyncio.gather(a.heartbeat(), b.heartbeat())
    assert set(codes) <= {ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION}
    joins = await asyncio.gather(a.join(), b.join())
    assert all(j["error_code"] == 0 for j in joins), joins
    for c in sorted((a, b), key=lambda c: not c.is_leader):
        assert (await c.sync())["error_code"] == 0
    assert held(a) | held(b) == set(range(6)) and not held(a) & held(b)
    assert cluster.coordinator.registry.groups["g"].state is GroupState.STABLE


@async_test
async def test_the_migration_policy_is_honoured() -> None:
    disabled = await MixedCluster(policy="disabled").start()
    await classic_group(disabled, "a")
    refused = await disabled.beat("m1", 0)
    assert refused["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    upgrade_only = await MixedCluster(policy="upgrade").start()
    (a,) = await classic_group(upgrade_only, "a")
    assert (await upgrade_only.beat("m1", 0))["error_code"] == 0
    await rejoin(a)
    assert (await upgrade_only.beat("m1", -1))["error_code"] == 0
    # No downgrade: the classic member goes on alone in the consumer group.
    assert upgrade_only.consumer_group_exists()
    assert await a.heartbeat() in (ErrorCode.NONE, ErrorCode.REBALANCE_IN_PROGRESS)


@async_test
async def test_a_classic_member_joins_a_consumer_group_and_survives_a_reload() -> None:
    store = MemoryOffsetsStore()
    cluster = await MixedCluster(store).start()
    joined = await cluster.beat("m1", 0)
    assert parts(joined) == set(range(6))
    late = Client(cluster, "g", "late", session_ms=4321)
    first = await late.join()
    assert first["error_code"] == 0 and first["protocol_name"] == "range"
    # m1 gives up half; the classic member then gets it on its next rejoin.
    answer = await cluster.beat("m1", joined["member_epoch"], list(range(6)))
    kept = parts(answer)
    await cluster.beat("m1", answer["member_epoch"], sorted(kept))
    assert await late.sync() and await late.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
    await rejoin(late)
    assert held(late) | kept == set(range(6)) and not held(late) & kept
    reloaded = await MixedCluster(store).start()
    group = reloaded.coordinator.consumer.groups["g"]
    classic = group.members[late.member_id].classic
    assert classic is not None and classic.session_timeout_ms == 4321
    assert group.members["m1"].classic is None


@async_test
async def test_a_classic_member_that_stops_heartbeating_is_fenced() -> None:
    cluster = await MixedCluster().start()
    await cluster.beat("m1", 0)
    silent = Client(cluster, "g", "silent", session_ms=50)
    assert (await silent.join())["error_code"] == 0
    for _ in range(100):
        if silent.member_id not in cluster.coordinator.consumer.groups["g"].members:
            break
        await asyncio.sleep(0.01)
    assert silent.member_id not in cluster.coordinator.consumer.groups["g"].members
    assert await silent.heartbeat() == ErrorCode.UNKNOWN_MEMBER_ID


@async_test
async def test_a_static_member_restarted_classic_downgrades_the_group_without_a_rebalance() -> None:
    """The last consumer-protocol member comes back under the classic protocol with
    its group.instance.id: the group is classic again, Stable, each member holding
    its share of the target (Kafka's validateOnlineDowngradeWithReplacedMemberId)."""
    cluster = await MixedCluster().start()
    (a,) = await classic_group(cluster, "a")
    joined = await cluster.beat("m1", 0, instance_id="i1")
    await rejoin(a)
    epoch = joined["member_epoch"]
    owned: set[int] = set()
    for _ in range(4):
        answer = await cluster.beat("m1", epoch, sorted(owned))
        epoch = answer["member_epoch"]
        if answer["assignment"] is not None:
            owned = parts(answer)
    assert owned and not owned & held(a)
    # Static consumer members leave with -2 and keep their place.
    assert (await cluster.beat("m1", -2, instance_id="i1"))["error_code"] == 0
    back = Client(cluster, "g", "back", instance_id="i1")
    join = await back.join()
    assert join["error_code"] == 0, join
    assert not cluster.consumer_group_exists()
    classic = cluster.coordinator.registry.groups["g"]
    assert classic.state is GroupState.STABLE and join["generation_id"] == classic.generation_id
    assert (await back.sync())["error_code"] == 0
    assert held(back) == owned
