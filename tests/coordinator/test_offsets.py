"""OffsetCommit / OffsetFetch / OffsetDelete / DeleteGroups / ListGroups / expiry."""

from __future__ import annotations

from samsa.coordinator import GroupConfig, GroupState
from samsa.errors import ErrorCode
from samsa.protocol.internal_records.group_records import GroupKey, OffsetKey, decode_key

from .helpers import (
    COMMIT,
    CONFIG,
    DELETE,
    DESCRIBE,
    FETCH,
    LIST,
    OFFSET_DELETE,
    Client,
    Cluster,
    async_test,
    fetch_v8,
    offsets_of,
)


async def simple_commit(cluster: Cluster, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """A standalone (admin / assign()) commit: generation -1, no member."""
    client = Client(cluster, group, "admin")
    result = await client.commit(offsets, generation=-1, member_id="")
    assert set(result.values()) == {0}, result


@async_test
async def test_commits_read_back_in_v1_v7_and_v8_layouts() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await a.join_and_sync()
    assert await a.commit({("t", 0): 10, ("t", 1): 11, ("u", 0): 20}, metadata="m") == {
        ("t", 0): 0,
        ("t", 1): 0,
        ("u", 0): 0,
    }

    wanted = [{"name": "t", "partition_indexes": [0, 1, 5]}]
    v1 = await cluster.call(FETCH, 1, {"group_id": "g", "topics": wanted})
    assert offsets_of(v1["topics"]) == {("t", 0): 10, ("t", 1): 11, ("t", 5): -1}
    parts = {p["partition_index"]: p for p in v1["topics"][0]["partitions"]}
    assert parts[0]["metadata"] == "m" and parts[5]["metadata"] == ""

    v7 = await cluster.call(FETCH, 7, {"group_id": "g", "topics": wanted, "require_stable": True})
    assert v7["error_code"] == 0
    parts = {p["partition_index"]: p for p in v7["topics"][0]["partitions"]}
    assert parts[0]["committed_leader_epoch"] == 3
    assert parts[5]["committed_leader_epoch"] == -1

    v8 = await cluster.call(
        FETCH,
        8,
        {
            "groups": [
                {"group_id": "g", "topics": wanted},
                {"group_id": "other", "topics": wanted},
                {"group_id": "g", "topics": None},
            ]
        },
    )
    g, other, everything = v8["groups"]
    assert offsets_of(g["topics"]) == {("t", 0): 10, ("t", 1): 11, ("t", 5): -1}
    assert offsets_of(other["topics"]) == {("t", 0): -1, ("t", 1): -1, ("t", 5): -1}
    assert offsets_of(everything["topics"]) == {("t", 0): 10, ("t", 1): 11, ("u", 0): 20}


@async_test
async def test_null_topics_returns_every_committed_partition() -> None:
    cluster = await Cluster().start()
    await simple_commit(cluster, "g", {("t", 2): 7, ("u", 1): 9})
    v2 = await cluster.call(FETCH, 2, {"group_id": "g", "topics": None})
    assert offsets_of(v2["topics"]) == {("t", 2): 7, ("u", 1): 9}
    empty = await cluster.call(FETCH, 7, {"group_id": "never", "topics": None})
    assert empty["topics"] == [] and empty["error_code"] == 0


@async_test
async def test_commit_to_unknown_partition_and_oversized_metadata() -> None:
    config = GroupConfig(
        group_initial_rebalance_delay_ms=0,
        group_min_session_timeout_ms=10,
        offsets_topic_num_partitions=4,
        offset_metadata_max_bytes=16,
    )
    cluster = await Cluster(config=config).start()
    a = Client(cluster, "g", "a")
    await a.join_and_sync()
    result = await a.commit({("t", 0): 1, ("t", 99): 1, ("nope", 0): 1})
    assert result == {
        ("t", 0): 0,
        ("t", 99): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    result = await a.commit({("t", 1): 5}, metadata="x" * 17)
    assert result == {("t", 1): ErrorCode.OFFSET_METADATA_TOO_LARGE}
    assert await a.commit({("t", 1): 5}, metadata="x" * 16) == {("t", 1): 0}
    g = await fetch_v8(cluster, "g", None)
    assert offsets_of(g["topics"]) == {("t", 0): 1, ("t", 1): 5}


@async_test
async def test_old_commit_versions_and_retention_time() -> None:
    cluster = await Cluster().start()
    body = {
        "group_id": "g",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "retention_time_ms": 60_000,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {"partition_index": 0, "committed_offset": 42, "committed_metadata": None}
                ],
            }
        ],
    }
    resp = await cluster.call(COMMIT, 2, body)
    assert resp["topics"][0]["partitions"][0]["error_code"] == 0
    committed = cluster.coordinator.registry.groups["g"].offsets[("t", 0)]
    assert committed.offset == 42 and committed.metadata == ""
    assert committed.expire_timestamp == committed.commit_timestamp + 60_000


@async_test
async def test_delete_groups() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await a.join_and_sync()
    await a.commit({("t", 0): 3})
    resp = await cluster.call(DELETE, 2, {"groups_names": ["g", "unknown"]})
    assert [(r["group_id"], r["error_code"]) for r in resp["results"]] == [
        ("g", ErrorCode.NON_EMPTY_GROUP),
        ("unknown", ErrorCode.GROUP_ID_NOT_FOUND),
    ]
    await a.leave()
    await cluster.coordinator.rebalancer.drain()
    resp = await cluster.call(DELETE, 0, {"groups_names": ["g"]})
    assert [(r["group_id"], r["error_code"]) for r in resp["results"]] == [("g", 0)]
    g = await fetch_v8(cluster, "g", None)
    assert g["topics"] == []
    listed = await cluster.call(LIST, 4, {"states_filter": []})
    assert listed["groups"] == []
    tail = cluster.store.all_records()[-2:]
    assert [(type(decode_key(k)), v) for _, (k, v) in tail] == [(OffsetKey, None), (GroupKey, None)]
    # Deleted for good: a reload does not bring it back.
    reloaded = await Cluster(cluster.store).start()
    assert "g" not in reloaded.coordinator.registry.groups


@async_test
async def test_list_and_describe_groups() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a")
    await a.join_and_sync()
    await simple_commit(cluster, "simple", {("t", 0): 1})
    all_groups = await cluster.call(LIST, 5, {"states_filter": [], "types_filter": []})
    assert sorted(
        (g["group_id"], g["group_state"], g["protocol_type"]) for g in all_groups["groups"]
    ) == [
        ("g", "Stable", "consumer"),
        ("simple", "Empty", ""),
    ]
    assert {g["group_type"] for g in all_groups["groups"]} == {"classic"}
    stable = await cluster.call(LIST, 4, {"states_filter": ["stable"]})
    assert [g["group_id"] for g in stable["groups"]] == ["g"]
    consumer_only = await cluster.call(LIST, 5, {"states_filter": [], "types_filter": ["consumer"]})
    assert consumer_only["groups"] == []

    described = await cluster.call(DESCRIBE, 5, {"groups": ["g", "missing"]})
    g, missing = described["groups"]
    assert g["group_state"] == "Stable" and g["protocol_data"] == "range"
    (member,) = g["members"]
    assert member["member_id"] == a.member_id and member["client_id"] == "a"
    assert member["member_assignment"] == a.assignment
    assert missing["group_state"] == "Dead" and missing["error_code"] == 0


@async_test
async def test_offset_delete() -> None:
    cluster = await Cluster().start()
    a = Client(cluster, "g", "a", topics=("t",))
    await a.join_and_sync()
    await a.commit({("t", 0): 1, ("u", 0): 2})
    body = {
        "group_id": "g",
        "topics": [
            {"name": "t", "partitions": [{"partition_index": 0}]},
            {"name": "u", "partitions": [{"partition_index": 0}]},
        ],
    }
    resp = await cluster.call(OFFSET_DELETE, 0, body)
    errors = {
        (t["name"], p["partition_index"]): p["error_code"]
        for t in resp["topics"]
        for p in t["partitions"]
    }
    assert errors == {("t", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ("u", 0): 0}
    assert offsets_of((await fetch_v8(cluster, "g", None))["topics"]) == {("t", 0): 1}
    missing = await cluster.call(OFFSET_DELETE, 0, {"group_id": "nope", "topics": []})
    assert missing["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


@async_test
async def test_expiry_tombstones_offsets_of_empty_groups() -> None:
    now = [1_000_000]
    cluster = await Cluster(time_ms=lambda: now[0]).start()
    a = Client(cluster, "g", "a")
    await a.join_and_sync()
    await a.commit({("t", 0): 5, ("t", 1): 6})
    await simple_commit(cluster, "simple", {("u", 0): 1})
    retention = CONFIG.offsets_retention_ms

    # A group with members keeps its offsets however old they are.
    assert await cluster.coordinator.expire_offsets(now[0] + retention + 1) == 1  # only `simple`
    assert "simple" not in cluster.coordinator.registry.groups
    assert offsets_of((await fetch_v8(cluster, "g", None))["topics"]) == {("t", 0): 5, ("t", 1): 6}

    now[0] += 10
    await a.leave()
    await cluster.coordinator.rebalancer.drain()
    assert cluster.state("g") is GroupState.EMPTY
    # Retention counts from when the group became Empty.
    assert await cluster.coordinator.expire_offsets(now[0] + retention - 1) == 0
    before = len(cluster.store.all_records())
    assert await cluster.coordinator.expire_offsets(now[0] + retention) == 2
    written = [r for _, r in cluster.store.all_records()[before:]]
    assert all(v is None for _, v in written)
    assert {type(decode_key(k)) for k, _ in written} == {OffsetKey, GroupKey}
    assert (await fetch_v8(cluster, "g", None))["topics"] == []
    assert "g" not in cluster.coordinator.registry.groups
    reloaded = await Cluster(cluster.store).start()
    assert reloaded.coordinator.registry.groups == {}


@async_test
async def test_deleted_partitions_lose_their_offsets() -> None:
    cluster = await Cluster().start()
    await simple_commit(cluster, "g1", {("t", 0): 1, ("u", 0): 2})
    await simple_commit(cluster, "g2", {("u", 0): 3, ("u", 1): 4})
    assert await cluster.coordinator.on_partitions_deleted({("u", 0), ("u", 1)}) == 3
    assert offsets_of((await fetch_v8(cluster, "g1", None))["topics"]) == {("t", 0): 1}
    assert (await fetch_v8(cluster, "g2", None))["topics"] == []
    reloaded = await Cluster(cluster.store).start()
    assert offsets_of((await fetch_v8(reloaded, "g1", None))["topics"]) == {("t", 0): 1}
    assert "g2" not in reloaded.coordinator.registry.groups


@async_test
async def test_empty_group_id_is_accepted_for_offset_apis() -> None:
    cluster = await Cluster().start()
    await simple_commit(cluster, "", {("t", 0): 8})
    resp = await cluster.call(FETCH, 7, {"group_id": "", "topics": None})
    assert offsets_of(resp["topics"]) == {("t", 0): 8}
    join = await Client(cluster, "", "a").join()
    assert join["error_code"] == ErrorCode.INVALID_GROUP_ID


@async_test
async def test_one_group_failing_expiry_does_not_stop_the_others() -> None:
    now = [1_000_000]
    cluster = await Cluster(time_ms=lambda: now[0]).start()
    await simple_commit(cluster, "a-simple", {("u", 0): 1})
    await simple_commit(cluster, "b-simple", {("u", 1): 2})
    expired_at = now[0] + CONFIG.offsets_retention_ms + 1

    cluster.store.fail_next(RuntimeError("injected expiry fault"))
    assert await cluster.coordinator.expire_offsets(expired_at) == 1
    assert set(cluster.coordinator.registry.groups) == {"a-simple"}  # b still expired
    assert await cluster.coordinator.expire_offsets(expired_at) == 1  # a retried
    assert cluster.coordinator.registry.groups == {}
