"""KIP-1071 streams groups in the coordinator, socket-free: every request and response
goes through the real codec, state goes through a real (memory) store and is
rebuilt from it."""

from __future__ import annotations

import asyncio
from typing import Any

from samsa.coordinator import GroupConfig, GroupCoordinator, MemoryOffsetsStore
from samsa.coordinator.streams import StreamsGroupConfig
from samsa.errors import ErrorCode
from samsa.protocol.api import decode_message, encode_message

from .helpers import async_test

HEARTBEAT, DESCRIBE, UPDATE = 88, 89, 93
COMMIT, TXN_COMMIT, FETCH, LIST, DESCRIBE_GROUPS, DELETE, JOIN = 8, 28, 9, 16, 15, 42, 11
REPARTITION, CHANGELOG = "app-repartition", "app-changelog"
TOPOLOGY = {
    "epoch": 0,
    "subtopologies": [
        {
            "subtopology_id": "0",
            "source_topics": ["lines"],
            "source_topic_regex": [],
            "state_changelog_topics": [],
            "repartition_sink_topics": [REPARTITION],
            "repartition_source_topics": [],
            "copartition_groups": [],
        },
        {
            "subtopology_id": "1",
            "source_topics": [],
            "source_topic_regex": [],
            "state_changelog_topics": [
                {"name": CHANGELOG, "partitions": 0, "replication_factor": -1, "topic_configs": []}
            ],
            "repartition_sink_topics": [],
            "repartition_source_topics": [
                {
                    "name": REPARTITION,
                    "partitions": 0,
                    "replication_factor": -1,
                    "topic_configs": [],
                }
            ],
            "copartition_groups": [],
        },
    ],
}
NO_TASKS: dict[str, list[Any]] = {"active_tasks": [], "standby_tasks": [], "warmup_tasks": []}


def tasks(wire: list[dict[str, Any]] | None) -> set[tuple[str, int]]:
    return {(t["subtopology_id"], p) for t in wire or () for p in t["partitions"]}


def owned(*active: tuple[str, int]) -> dict[str, Any]:
    by_sub: dict[str, list[int]] = {}
    for s, p in active:
        by_sub.setdefault(s, []).append(p)
    return {
        "active_tasks": [{"subtopology_id": s, "partitions": ps} for s, ps in by_sub.items()],
        "standby_tasks": [],
        "warmup_tasks": [],
    }


class Streams:
    """A coordinator with a mutable topic list, called through the wire codec."""

    def __init__(self, store: MemoryOffsetsStore | None = None, **config: Any) -> None:
        self.store = store if store is not None else MemoryOffsetsStore()
        self.topics: dict[str, tuple[bytes, int]] = {"lines": (b"\x01" * 16, 2)}
        self.group_configs: dict[str, dict[str, str]] = {}
        streams = {"initial_rebalance_delay_ms": 0, **config}
        self.coordinator = GroupCoordinator(
            self.store,
            GroupConfig(offsets_topic_num_partitions=2, group_initial_rebalance_delay_ms=0),
            streams_config=StreamsGroupConfig(**streams),
            group_configs=lambda g: self.group_configs.get(g, {}),
            topics=lambda: self.topics,
            partition_exists=lambda t, p: True,
        )
        self.to_create: dict[str, int] = {}

    async def start(self) -> Streams:
        await self.coordinator.load_all()
        return self

    def create_internal_topics(self) -> None:
        self.topics[REPARTITION] = (b"\x02" * 16, 2)
        self.topics[CHANGELOG] = (b"\x03" * 16, 2)

    async def call(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        c = self.coordinator
        request = decode_message(key, version, encode_message(key, version, body, True), True)
        if key == HEARTBEAT:
            result = await c.streams_group_heartbeat(request, version, client_id="cid")
            self.to_create = {n: t.partitions for n, t in result.to_create.items()}
            response = result.response
        else:
            method = {
                DESCRIBE: c.streams_group_describe,
                UPDATE: c.streams_group_topology_description_update,
                COMMIT: c.offset_commit,
                TXN_COMMIT: c.txn_offset_commit,
                FETCH: c.offset_fetch,
                LIST: c.list_groups,
                DESCRIBE_GROUPS: c.describe_groups,
                DELETE: c.delete_groups,
                JOIN: c.join_group,
            }[key]
            response = await method(request, version)
        return decode_message(key, version, encode_message(key, version, response, False), False)

    async def join(self, member: str, process: str = "p1", **extra: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "group_id": "app",
            "member_id": member,
            "member_epoch": 0,
            "endpoint_information_epoch": -1,
            "rebalance_timeout_ms": 30_000,
            "topology": TOPOLOGY,
            "process_id": process,
            "client_tags": [],
            **NO_TASKS,
        }
        body.update(extra)
        return await self.call(HEARTBEAT, 1, body)

    async def beat(self, member: str, epoch: int, **extra: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "group_id": "app",
            "member_id": member,
            "member_epoch": epoch,
            "endpoint_information_epoch": -1,
        }
        body.update(extra)
        return await self.call(HEARTBEAT, 1, body)

    async def describe(self) -> dict[str, Any]:
        answer = await self.call(
            DESCRIBE, 1, {"group_ids": ["app"], "include_authorized_operations": False}
        )
        group: dict[str, Any] = answer["groups"][0]
        return group

    async def commit(
        self, member: str, epoch: int, partitions: list[tuple[str, int]], version: int = 9
    ) -> dict[tuple[str, int], int]:
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for t, p in partitions:
            by_topic.setdefault(t, []).append(
                {"partition_index": p, "committed_offset": 7, "committed_metadata": ""}
            )
        answer = await self.call(
            COMMIT,
            version,
            {
                "group_id": "app",
                "generation_id_or_member_epoch": epoch,
                "member_id": member,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
            },
        )
        return {
            (t["name"], p["partition_index"]): p["error_code"]
            for t in answer["topics"]
            for p in t["partitions"]
        }


def statuses(response: dict[str, Any]) -> dict[int, str]:
    return {s["status_code"]: s["status_detail"] for s in response["status"] or ()}


async def ready_group(streams: Streams) -> dict[str, Any]:
    """One member whose group is configured and assigned every task."""
    first = await streams.join("m1")
    assert first["error_code"] == 0, first
    streams.create_internal_topics()
    return await streams.beat("m1", first["member_epoch"], **NO_TASKS)


@async_test
async def test_first_member_initialises_the_topology_and_asks_for_its_internal_topics() -> None:
    streams = await Streams().start()
    first = await streams.join("m1")
    assert first["error_code"] == 0 and first["member_epoch"] == 1
    assert statuses(first) == {
        3: f"Internal topics are missing: [{CHANGELOG}, {REPARTITION}]",
    }
    assert streams.to_create == {REPARTITION: 2, CHANGELOG: 2}
    assert tasks(first["active_tasks"]) == set(), "nothing to run until the topics exist"
    assert first["heartbeat_interval_ms"] == 5000
    described = await streams.describe()
    assert (described["group_state"], described["assignor_name"]) == ("NotReady", "sticky")
    streams.create_internal_topics()
    assigned = await streams.beat("m1", 1, **NO_TASKS)
    assert assigned["status"] is None and streams.to_create == {}
    assert assigned["member_epoch"] == 2
    assert tasks(assigned["active_tasks"]) == {("0", 0), ("0", 1), ("1", 0), ("1", 1)}
    assert (await streams.describe())["group_state"] == "Stable"


@async_test
async def test_tasks_move_to_a_second_instance_only_after_they_are_revoked() -> None:
    streams = await Streams().start()
    one = await ready_group(streams)
    everything = tasks(one["active_tasks"])
    second = await streams.join("m2", process="p2")
    assert second["member_epoch"] == 3
    assert tasks(second["active_tasks"]) == set(), "the first instance still runs them"
    revoking = await streams.beat("m1", 2, **owned(*everything))
    assert revoking["member_epoch"] == 2, "m1 keeps its epoch until it revokes"
    kept = tasks(revoking["active_tasks"])
    assert len(kept) == 2
    done = await streams.beat("m1", 2, **owned(*kept))
    assert done["member_epoch"] == 3
    moved = await streams.beat("m2", 3, **NO_TASKS)
    assert tasks(moved["active_tasks"]) == everything - kept
    described = await streams.describe()
    assert described["group_state"] == "Stable"
    members = {m["member_id"]: m for m in described["members"]}
    assert tasks(members["m2"]["assignment"]["active_tasks"]) == everything - kept
    assert members["m2"]["process_id"] == "p2"


@async_test
async def test_leaving_and_expired_members_free_their_tasks() -> None:
    streams = await Streams(session_timeout_ms=50, min_session_timeout_ms=10).start()
    one = await ready_group(streams)
    second = await streams.join("m2", process="p2")
    left = await streams.beat("m2", second["member_epoch"], member_epoch=-1)
    assert (left["error_code"], left["member_epoch"]) == (0, -1)
    described = await streams.describe()
    assert [m["member_id"] for m in described["members"]] == ["m1"]
    assert tasks(one["active_tasks"])
    # m1 stops heartbeating: the session timeout fences it.
    for _ in range(100):
        if not (await streams.describe())["members"]:
            break
        await asyncio.sleep(0.02)
    assert (await streams.describe())["group_state"] == "Empty"


@async_test
async def test_epochs_and_unknown_members_are_fenced() -> None:
    streams = await Streams().start()
    await ready_group(streams)
    future = await streams.beat("m1", 9, **NO_TASKS)
    assert future["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    unknown = await streams.beat("nobody", 1)
    assert unknown["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    no_group = await streams.call(
        HEARTBEAT,
        1,
        {
            "group_id": "other",
            "member_id": "x",
            "member_epoch": 3,
            "endpoint_information_epoch": -1,
        },
    )
    assert no_group["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    bad_task = await streams.beat("m1", 2, **owned(("1", 5)))
    assert bad_task["error_code"] == ErrorCode.INVALID_REQUEST
    assert bad_task["error_message"] == (
        "Task 5 for subtopology 1 is invalid. Number of tasks for this subtopology: 2"
    )


@async_test
async def test_requests_are_checked_as_kafka_checks_them() -> None:
    streams = await Streams().start()
    no_topology = await streams.join("m1", topology=None)
    assert (no_topology["error_code"], no_topology["error_message"]) == (
        ErrorCode.INVALID_REQUEST,
        "Topology must be non-null when (re-)joining.",
    )
    no_timeout = await streams.join("m1", rebalance_timeout_ms=-1)
    assert no_timeout["error_message"] == "RebalanceTimeoutMs must be provided in first request."
    partial = await streams.beat("m1", 1, active_tasks=[])
    assert partial["error_message"] == "If one task-type is non-null, all must be non-null."
    changelog = dict(TOPOLOGY)
    sub = dict(TOPOLOGY["subtopologies"][1])  # type: ignore[index]
    sub["state_changelog_topics"] = [
        {"name": CHANGELOG, "partitions": 3, "replication_factor": -1, "topic_configs": []}
    ]
    changelog["subtopologies"] = [TOPOLOGY["subtopologies"][0], sub]  # type: ignore[index]
    sized = await streams.join("m1", topology=changelog)
    assert sized["error_code"] == ErrorCode.STREAMS_INVALID_TOPOLOGY
    update = await streams.call(
        UPDATE,
        0,
        {
            "group_id": "app",
            "member_id": "m1",
            "topology_epoch": 0,
            "topology_description": {"subtopologies": [], "global_stores": []},
        },
    )
    assert update["error_code"] == ErrorCode.UNSUPPORTED_VERSION


@async_test
async def test_offset_commits_are_checked_against_member_and_task_epochs() -> None:
    streams = await Streams().start()
    one = await ready_group(streams)
    epoch = one["member_epoch"]
    assert set((await streams.commit("m1", epoch, [("lines", 0)])).values()) == {0}
    assert (await streams.commit("m1", epoch, [("lines", 0)], version=8)) == {
        ("lines", 0): ErrorCode.UNSUPPORTED_VERSION
    }
    assert (await streams.commit("m1", epoch + 1, [("lines", 0)])) == {
        ("lines", 0): ErrorCode.STALE_MEMBER_EPOCH
    }
    assert (await streams.commit("m9", epoch, [("lines", 0)])) == {
        ("lines", 0): ErrorCode.UNKNOWN_MEMBER_ID
    }
    # KIP-1251: an older epoch may commit the tasks the member held since that epoch.
    second = await streams.join("m2", process="p2")
    await streams.beat("m1", epoch, **owned(*tasks(one["active_tasks"])))
    moved = await streams.beat("m1", epoch, **owned(("0", 0), ("1", 0)))
    assert moved["member_epoch"] == second["member_epoch"]
    old = await streams.commit("m1", epoch - 1, [("lines", 0)])
    assert old == {("lines", 0): ErrorCode.STALE_MEMBER_EPOCH}, "task 0_0 was granted at epoch 2"
    at_grant = await streams.commit("m1", epoch, [("lines", 0), ("lines", 1)])
    assert at_grant == {("lines", 0): 0, ("lines", 1): ErrorCode.STALE_MEMBER_EPOCH}
    fetched = await streams.call(
        FETCH,
        9,
        {"groups": [{"group_id": "app", "member_id": "m1", "member_epoch": 1, "topics": None}]},
    )
    assert fetched["groups"][0]["error_code"] == ErrorCode.STALE_MEMBER_EPOCH


@async_test
async def test_list_describe_and_delete_see_streams_groups() -> None:
    streams = await Streams().start()
    await ready_group(streams)
    listed = await streams.call(LIST, 5, {"states_filter": [], "types_filter": ["streams"]})
    assert listed["groups"] == [
        {
            "group_id": "app",
            "protocol_type": "streams",
            "group_state": "Stable",
            "group_type": "streams",
        }
    ]
    classic = await streams.call(
        DESCRIBE_GROUPS, 6, {"groups": ["app"], "include_authorized_operations": False}
    )
    assert classic["groups"][0]["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    joined = await streams.call(
        JOIN,
        9,
        {
            "group_id": "app",
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": "",
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
        },
    )
    assert joined["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    busy = await streams.call(DELETE, 2, {"groups_names": ["app"]})
    assert busy["results"][0]["error_code"] == ErrorCode.NON_EMPTY_GROUP
    await streams.beat("m1", 2, member_epoch=-1)
    deleted = await streams.call(DELETE, 2, {"groups_names": ["app"]})
    assert deleted["results"][0]["error_code"] == 0
    assert (await streams.describe())["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


@async_test
async def test_a_reloaded_coordinator_rebuilds_the_group_from_its_records() -> None:
    store = MemoryOffsetsStore()
    streams = await Streams(store).start()
    one = await ready_group(streams)
    before = await streams.describe()
    again = await Streams(store).start()
    again.create_internal_topics()
    after = await again.describe()
    for field in ("group_epoch", "assignment_epoch", "group_state", "topology"):
        assert after[field] == before[field], field
    assert after["members"] == before["members"]
    back = await again.beat("m1", one["member_epoch"], **owned(*tasks(one["active_tasks"])))
    assert back["error_code"] == 0 and back["member_epoch"] == one["member_epoch"]


@async_test
async def test_group_configs_override_the_broker_defaults() -> None:
    streams = await Streams().start()
    streams.group_configs["app"] = {"streams.heartbeat.interval.ms": "7000"}
    first = await streams.join("m1")
    assert first["heartbeat_interval_ms"] == 7000
    streams.group_configs["app"] = {"streams.heartbeat.interval.ms": "100"}
    clamped = await streams.beat("m1", first["member_epoch"])
    assert clamped["heartbeat_interval_ms"] == 5000, "never below the broker's minimum"


@async_test
async def test_a_static_member_comes_back_under_a_new_member_id_with_its_tasks() -> None:
    streams = await Streams().start()
    first = await streams.join("m1", instance_id="instance-a")
    streams.create_internal_topics()
    held = await streams.beat("m1", first["member_epoch"], **NO_TASKS)
    everything = tasks(held["active_tasks"])
    taken = await streams.join("m2", instance_id="instance-a")
    assert taken["error_code"] == ErrorCode.UNRELEASED_INSTANCE_ID
    paused = await streams.beat(
        "m1", held["member_epoch"], member_epoch=-2, instance_id="instance-a"
    )
    assert (paused["error_code"], paused["member_epoch"]) == (0, -2)
    back = await streams.join("m2", instance_id="instance-a")
    assert back["error_code"] == 0, back
    assert tasks(back["active_tasks"]) == everything, "the tasks wait for the instance"
    members = [m["member_id"] for m in (await streams.describe())["members"]]
    assert members == ["m2"]


@async_test
async def test_a_new_group_waits_its_initial_rebalance_delay_before_assigning() -> None:
    streams = await Streams(initial_rebalance_delay_ms=200).start()
    streams.create_internal_topics()
    first = await streams.join("m1")
    assert statuses(first) == {
        5: "Assignment delayed due to the configured initial rebalance delay."
    }
    assert tasks(first["active_tasks"]) == set()
    second = await streams.join("m2", process="p2")
    assert tasks(second["active_tasks"]) == set()
    # The coordinator assigns when the delay ends; members see it at their next heartbeat.
    for _ in range(100):
        if (await streams.describe())["assignment_epoch"] > 0:
            break
        await asyncio.sleep(0.02)
    one = await streams.beat("m1", first["member_epoch"], **NO_TASKS)
    two = await streams.beat("m2", second["member_epoch"], **NO_TASKS)
    assert len(tasks(one["active_tasks"])) == len(tasks(two["active_tasks"])) == 2
