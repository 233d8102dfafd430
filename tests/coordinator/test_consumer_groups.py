"""KIP-848 consumer groups in the coordinator, socket-free: every request and
response goes through the real codec, state goes through a real (memory) store."""

from __future__ import annotations

import asyncio
from typing import Any

from samsa.coordinator import GroupConfig, GroupCoordinator, MemoryOffsetsStore
from samsa.coordinator.consumer import ConsumerGroupConfig
from samsa.errors import ErrorCode
from samsa.protocol.api import decode_message, encode_message

from .helpers import async_test

T = b"\x01" * 16
U = b"\x02" * 16
HEARTBEAT, DESCRIBE, COMMIT, FETCH, LIST, DESCRIBE_GROUPS, JOIN = 68, 69, 8, 9, 16, 15, 11
OFFSET_DELETE = 47


class Groups:
    """A coordinator with a mutable topic list, called through the wire codec."""

    def __init__(
        self,
        store: MemoryOffsetsStore | None = None,
        session_timeout_ms: int = 45_000,
        **kwargs: Any,
    ) -> None:
        self.store = store if store is not None else MemoryOffsetsStore()
        self.topics: dict[str, tuple[bytes, int]] = {"t": (T, 6)}
        self.coordinator = GroupCoordinator(
            self.store,
            GroupConfig(offsets_topic_num_partitions=2, group_initial_rebalance_delay_ms=0),
            consumer_config=ConsumerGroupConfig(session_timeout_ms=session_timeout_ms),
            topics=lambda: self.topics,
            partition_exists=lambda t, p: True,
            **kwargs,
        )

    async def start(self) -> Groups:
        await self.coordinator.load_all()
        return self

    async def call(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        c = self.coordinator
        method = {
            HEARTBEAT: c.consumer_group_heartbeat,
            DESCRIBE: c.consumer_group_describe,
            COMMIT: c.offset_commit,
            FETCH: c.offset_fetch,
            LIST: c.list_groups,
            DESCRIBE_GROUPS: c.describe_groups,
            JOIN: c.join_group,
            OFFSET_DELETE: c.offset_delete,
        }[key]
        request = decode_message(key, version, encode_message(key, version, body, True), True)
        response = await method(request, version)
        return decode_message(key, version, encode_message(key, version, response, False), False)

    async def join(
        self, member: str, topics: list[str] | None = None, **extra: Any
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "group_id": "g",
            "member_id": member,
            "member_epoch": 0,
            "rebalance_timeout_ms": 30_000,
            "subscribed_topic_names": topics if topics is not None else ["t"],
            "topic_partitions": [],
        }
        body.update(extra)
        return await self.call(HEARTBEAT, 1, body)

    async def beat(
        self, member: str, epoch: int, owned: list[int] | None = None, **extra: Any
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"group_id": "g", "member_id": member, "member_epoch": epoch}
        if owned is not None:
            body["topic_partitions"] = [{"topic_id": T, "partitions": owned}] if owned else []
        body.update(extra)
        return await self.call(HEARTBEAT, 1, body)

    async def describe(self) -> dict[str, Any]:
        answer = await self.call(DESCRIBE, 0, {"group_ids": ["g"]})
        group: dict[str, Any] = answer["groups"][0]
        return group


def parts(response: dict[str, Any]) -> list[int]:
    assignment = response["assignment"]
    assert assignment is not None, response
    return sorted(p for t in assignment["topic_partitions"] for p in t["partitions"])


@async_test
async def test_first_member_gets_every_partition_at_epoch_one() -> None:
    groups = await Groups().start()
    answer = await groups.join("m1")
    assert answer["error_code"] == 0
    assert answer["member_epoch"] == 1
    assert parts(answer) == [0, 1, 2, 3, 4, 5]
    described = await groups.describe()
    assert (described["group_state"], described["group_epoch"]) == ("Stable", 1)
    assert described["assignor_name"] == "uniform"


@async_test
async def test_partition_is_revoked_before_it_is_assigned_elsewhere() -> None:
    groups = await Groups().start()
    await groups.join("m1")
    joined = await groups.join("m2")
    # The new member's share is still held by m1: it gets the epoch, not the partitions.
    assert joined["member_epoch"] == 2
    assert parts(joined) == []
    revoking = await groups.beat("m1", 1)
    kept = parts(revoking)
    assert len(kept) == 3 and revoking["member_epoch"] == 1, "m1 keeps its epoch until it revokes"
    still_waiting = await groups.beat("m2", 2)
    assert still_waiting["assignment"] is None or parts(still_waiting) == []
    done = await groups.beat("m1", 1, owned=kept)
    assert done["member_epoch"] == 2
    released = await groups.beat("m2", 2)
    assert parts(released) == sorted(set(range(6)) - set(kept))
    described = await groups.describe()
    assert described["group_state"] == "Stable"


@async_test
async def test_stale_and_future_epochs_are_fenced() -> None:
    groups = await Groups().start()
    await groups.join("m1")
    assert (await groups.beat("m1", 7))["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    await groups.join("m2")
    await groups.beat("m1", 1, owned=[0, 1, 2, 3, 4, 5])
    revoked = await groups.beat("m1", 1, owned=[3, 4, 5])
    assert revoked["member_epoch"] == 2
    # The answer carrying epoch 2 was lost: epoch 1 with a subset of its partitions is fine...
    assert (await groups.beat("m1", 1, owned=[3, 4, 5]))["error_code"] == 0
    # ...but not while claiming partitions it no longer has.
    lost = await groups.beat("m1", 1, owned=[0, 3, 4, 5])
    assert lost["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    unknown = await groups.beat("nobody", 1)
    assert unknown["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


@async_test
async def test_leaving_member_frees_its_partitions() -> None:
    groups = await Groups().start()
    await groups.join("m1")
    await groups.join("m2")
    await groups.beat("m1", 1)
    await groups.beat("m1", 1, owned=[3, 4, 5])
    left = await groups.beat("m2", -1)
    assert (left["error_code"], left["member_epoch"]) == (0, -1)
    back = await groups.beat("m1", 2)
    assert back["member_epoch"] == 3, back
    assert parts(back) == [0, 1, 2, 3, 4, 5]


@async_test
async def test_bad_requests_get_kafka_errors() -> None:
    groups = await Groups().start()
    bad_regex = await groups.join("m1", topics=None, subscribed_topic_regex="t(")
    assert bad_regex["error_code"] == ErrorCode.INVALID_REGULAR_EXPRESSION
    no_timeout = await groups.join("m1", rebalance_timeout_ms=-1)
    assert no_timeout["error_code"] == ErrorCode.INVALID_REQUEST
    assignor = await groups.join("m1", server_assignor="sticky")
    assert assignor["error_code"] == ErrorCode.UNSUPPORTED_ASSIGNOR
    no_member = await groups.join("")
    assert no_member["error_code"] == ErrorCode.INVALID_REQUEST
    assert (await groups.describe())["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


@async_test
async def test_regex_subscription_follows_new_topics() -> None:
    groups = await Groups().start()
    groups.topics = {
        "orders-eu": (T, 2),
        "payments": (U, 2),
        "__consumer_offsets": (b"\x03" * 16, 2),
    }
    first = await groups.join("m1", topics=None, subscribed_topic_regex="orders-.*")
    assert first["assignment"]["topic_partitions"] == [{"topic_id": T, "partitions": [0, 1]}]
    groups.topics["orders-us"] = (U, 3)
    del groups.topics["payments"]
    grown = await groups.beat("m1", 1)
    by_topic = {t["topic_id"]: t["partitions"] for t in grown["assignment"]["topic_partitions"]}
    assert by_topic == {T: [0, 1], U: [0, 1, 2]}
    assert grown["member_epoch"] == 2


@async_test
async def test_range_assignor_gives_contiguous_ranges() -> None:
    groups = await Groups().start()
    await groups.join("a", server_assignor="range")
    await groups.join("b", server_assignor="range")
    await groups.beat("a", 1, owned=[0, 1, 2, 3, 4, 5])
    described = await groups.describe()
    targets = {
        m["member_id"]: m["target_assignment"]["topic_partitions"][0]["partitions"]
        for m in described["members"]
    }
    assert targets == {"a": [0, 1, 2], "b": [3, 4, 5]}
    assert described["assignor_name"] == "range"


@async_test
async def test_static_member_returns_to_its_partitions_without_a_new_epoch() -> None:
    groups = await Groups().start()
    await groups.join("a1", instance_id="a")
    await groups.join("b1", instance_id="b")
    await groups.beat("a1", 1, owned=list(range(6)))
    a_parts = parts(await groups.beat("a1", 1, owned=[3, 4, 5]))
    epoch_before = (await groups.describe())["group_epoch"]
    busy = await groups.join("a2", instance_id="a")
    assert busy["error_code"] == ErrorCode.UNRELEASED_INSTANCE_ID
    left = await groups.beat("a1", -2, instance_id="a")
    assert left["member_epoch"] == -2
    back = await groups.join("a2", instance_id="a")
    assert back["error_code"] == 0
    assert parts(back) == a_parts
    described = await groups.describe()
    assert described["group_epoch"] == epoch_before
    assert {m["member_id"] for m in described["members"]} == {"a2", "b1"}


@async_test
async def test_silent_member_is_fenced_after_the_session_timeout() -> None:
    groups = await Groups(session_timeout_ms=50).start()
    await groups.join("m1")
    manager = groups.coordinator.consumer
    for _ in range(200):
        if "m1" not in manager.groups["g"].members:
            break
        await asyncio.sleep(0.01)
    assert "m1" not in manager.groups["g"].members
    assert (await groups.beat("m1", 1))["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


@async_test
async def test_state_survives_a_reload_from_the_log() -> None:
    store = MemoryOffsetsStore()
    groups = await Groups(store).start()
    await groups.join("m1", instance_id="i1")
    await groups.join("m2")
    await groups.beat("m1", 1, owned=list(range(6)))
    before = await groups.describe()
    await groups.coordinator.shutdown()
    reloaded = await Groups(store).start()
    after = await reloaded.describe()
    assert after == before
    # The members carry on with the epochs they had.
    assert (await reloaded.beat("m2", 2))["error_code"] == 0


@async_test
async def test_commits_and_fetches_are_checked_against_member_epochs() -> None:
    groups = await Groups().start()
    await groups.join("m1")

    async def commit(member: str, epoch: int) -> int:
        answer = await groups.call(
            COMMIT,
            9,
            {
                "group_id": "g",
                "generation_id_or_member_epoch": epoch,
                "member_id": member,
                "topics": [
                    {
                        "name": "t",
                        "partitions": [{"partition_index": 0, "committed_offset": 42}],
                    }
                ],
            },
        )
        return int(answer["topics"][0]["partitions"][0]["error_code"])

    assert await commit("m1", 0) == ErrorCode.STALE_MEMBER_EPOCH
    assert await commit("m9", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert await commit("", -1) == ErrorCode.UNKNOWN_MEMBER_ID  # admin commit, group not empty
    assert await commit("m1", 1) == ErrorCode.NONE

    async def fetch(member: str | None, epoch: int) -> dict[str, Any]:
        answer = await groups.call(
            FETCH,
            9,
            {
                "groups": [
                    {
                        "group_id": "g",
                        "member_id": member,
                        "member_epoch": epoch,
                        "topics": [{"name": "t", "partition_indexes": [0]}],
                    }
                ]
            },
        )
        group: dict[str, Any] = answer["groups"][0]
        return group

    assert (await fetch("m1", 0))["error_code"] == ErrorCode.STALE_MEMBER_EPOCH
    fetched = await fetch("m1", 1)
    assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 42
    assert (await fetch(None, -1))["error_code"] == 0


@async_test
async def test_list_and_describe_groups_show_the_consumer_type() -> None:
    groups = await Groups().start()
    await groups.join("m1")
    listed = await groups.call(LIST, 5, {"states_filter": [], "types_filter": []})
    assert [(g["group_id"], g["group_type"], g["group_state"]) for g in listed["groups"]] == [
        ("g", "consumer", "Stable")
    ]
    classic_only = await groups.call(LIST, 5, {"states_filter": [], "types_filter": ["classic"]})
    assert classic_only["groups"] == []
    described = await groups.call(DESCRIBE_GROUPS, 5, {"groups": ["g"]})
    (group,) = described["groups"]
    assert (group["protocol_type"], group["group_state"]) == ("consumer", "Stable")
    assert [m["member_id"] for m in group["members"]] == ["m1"]


@async_test
async def test_empty_classic_group_is_upgraded_and_keeps_its_offsets() -> None:
    groups = await Groups().start()
    standalone = await groups.call(
        COMMIT,
        9,
        {
            "group_id": "g",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "topics": [
                {"name": "t", "partitions": [{"partition_index": 2, "committed_offset": 9}]}
            ],
        },
    )
    assert standalone["topics"][0]["partitions"][0]["error_code"] == 0
    assert (await groups.join("m1"))["error_code"] == 0
    answer = await groups.call(
        FETCH,
        9,
        {"groups": [{"group_id": "g", "member_id": "m1", "member_epoch": 1, "topics": None}]},
    )
    assert answer["groups"][0]["topics"][0]["partitions"][0]["committed_offset"] == 9


@async_test
async def test_classic_join_of_another_protocol_type_to_a_live_consumer_group_is_refused() -> None:
    """Classic consumers join (KIP-848 migration, test_group_migration); a Connect
    worker's protocol type cannot."""
    groups = await Groups().start()
    await groups.join("m1")
    answer = await groups.call(
        JOIN,
        9,
        {
            "group_id": "g",
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": "",
            "protocol_type": "connect",
            "protocols": [{"name": "sessioned", "metadata": b""}],
        },
    )
    assert answer["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


@async_test
async def test_member_that_never_revokes_is_fenced_after_its_rebalance_timeout() -> None:
    groups = await Groups().start()
    await groups.join("m1", rebalance_timeout_ms=100)
    await groups.join("m2")
    await groups.beat("m1", 1)  # told to revoke
    # Heartbeats keep the session alive but do not stop the revocation deadline.
    for _ in range(300):
        answer = await groups.beat("m1", 1, owned=[0, 1, 2, 3, 4, 5])
        if answer["error_code"] != 0:
            break
        await asyncio.sleep(0.01)
    assert answer["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    freed = await groups.beat("m2", 2)
    assert parts(freed) == [0, 1, 2, 3, 4, 5]


@async_test
async def test_offsets_of_a_group_in_use_do_not_expire() -> None:
    now = [1_000_000]
    groups = await Groups(time_ms=lambda: now[0]).start()
    await groups.join("m1")
    committed = await groups.call(
        COMMIT,
        9,
        {
            "group_id": "g",
            "generation_id_or_member_epoch": 1,
            "member_id": "m1",
            "topics": [
                {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5}]}
            ],
        },
    )
    assert committed["topics"][0]["partitions"][0]["error_code"] == 0
    now[0] += 8 * 24 * 3600 * 1000  # past the 7-day default retention
    assert await groups.coordinator.expire_offsets() == 0
    await groups.beat("m1", -1)
    assert await groups.coordinator.expire_offsets() == 1


@async_test
async def test_offsets_of_subscribed_topics_cannot_be_deleted() -> None:
    groups = await Groups().start()
    groups.topics["old"] = (U, 1)
    await groups.join("m1")
    for topic in ("t", "old"):
        await groups.call(
            COMMIT,
            9,
            {
                "group_id": "g",
                "generation_id_or_member_epoch": 1,
                "member_id": "m1",
                "topics": [
                    {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 3}]}
                ],
            },
        )
    answer = await groups.call(
        OFFSET_DELETE,
        0,
        {
            "group_id": "g",
            "topics": [
                {"name": "t", "partitions": [{"partition_index": 0}]},
                {"name": "old", "partitions": [{"partition_index": 0}]},
            ],
        },
    )
    errors = {t["name"]: t["partitions"][0]["error_code"] for t in answer["topics"]}
    assert errors == {"t": ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, "old": 0}
