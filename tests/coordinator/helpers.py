"""Socket-free harness for the group coordinator: a fake cluster, wire round-trips, simulated clients.

Every request and response goes through the real schema codec for its
version, so a dict that would not encode (a wrong field name, a missing
nullable) fails the test just as it would fail a real client.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Self

from samsa.coordinator import GroupConfig, GroupCoordinator, GroupState, MemoryOffsetsStore
from samsa.errors import ErrorCode
from samsa.protocol.api import decode_message, encode_message
from samsa.protocol.consumer_protocol import (
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

TOPIC_PARTITIONS = {"t": 6, "u": 2}
CONFIG = GroupConfig(
    group_initial_rebalance_delay_ms=0,
    group_min_session_timeout_ms=10,
    offsets_topic_num_partitions=4,
)

JOIN, SYNC, HEARTBEAT, LEAVE = 11, 14, 12, 13
COMMIT, FETCH, LIST, DESCRIBE, DELETE, OFFSET_DELETE = 8, 9, 16, 15, 42, 47
CONSUMER_HEARTBEAT, CONSUMER_DESCRIBE = 68, 69


def async_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test on a fresh event loop, bounded so a hang fails fast."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        async def bounded() -> None:
            await asyncio.wait_for(fn(*args, **kwargs), timeout=10)

        asyncio.run(bounded())

    return wrapper


def partition_exists(topic: str, partition: int) -> bool:
    return 0 <= partition < TOPIC_PARTITIONS.get(topic, 0)


class Cluster:
    """A coordinator over a store, with wire-checked calls and a transition log.

    ``coordinator_kwargs`` go to the ``GroupCoordinator`` as they are (a consumer
    group config and a topic list, for tests of KIP-848 groups beside classic ones).
    """

    def __init__(
        self,
        store: MemoryOffsetsStore | None = None,
        config: GroupConfig = CONFIG,
        time_ms: Callable[[], int] | None = None,
        **coordinator_kwargs: Any,
    ) -> None:
        self.store = store if store is not None else MemoryOffsetsStore()
        self.transitions: list[tuple[str, GroupState, GroupState]] = []
        self._watchers: list[tuple[str, GroupState, asyncio.Future[None]]] = []
        kwargs: dict[str, Any] = {} if time_ms is None else {"time_ms": time_ms}
        self.coordinator = GroupCoordinator(
            self.store,
            config,
            partition_exists=partition_exists,
            on_transition=self._on_transition,
            **kwargs,
            **coordinator_kwargs,
        )

    def _on_transition(self, group: str, old: GroupState, new: GroupState) -> None:
        self.transitions.append((group, old, new))
        for watch in list(self._watchers):
            if watch[0] == group and watch[1] is new and not watch[2].done():
                watch[2].set_result(None)
                self._watchers.remove(watch)

    def next_transition(self, group: str, state: GroupState) -> asyncio.Future[None]:
        """A future that resolves when ``group`` next enters ``state``."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watchers.append((group, state, fut))
        return fut

    async def start(self) -> Self:
        await self.coordinator.load_all()
        return self

    async def call(
        self, api_key: int, version: int, body: dict[str, Any], **kw: Any
    ) -> dict[str, Any]:
        c = self.coordinator
        method = {
            JOIN: c.join_group,
            SYNC: c.sync_group,
            HEARTBEAT: c.heartbeat,
            LEAVE: c.leave_group,
            COMMIT: c.offset_commit,
            FETCH: c.offset_fetch,
            LIST: c.list_groups,
            DESCRIBE: c.describe_groups,
            DELETE: c.delete_groups,
            OFFSET_DELETE: c.offset_delete,
            CONSUMER_HEARTBEAT: c.consumer_group_heartbeat,
            CONSUMER_DESCRIBE: c.consumer_group_describe,
        }[api_key]
        request = decode_message(
            api_key, version, encode_message(api_key, version, body, True), True
        )
        response = await method(request, version, **kw)
        return decode_message(
            api_key, version, encode_message(api_key, version, response, False), False
        )

    def state(self, group: str) -> GroupState:
        return self.coordinator.registry.groups[group].state


def subscription(*topics: str) -> list[dict[str, Any]]:
    return [{"name": "range", "metadata": encode_subscription(topics)}]


def round_robin(members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leader's job in tests: spread every subscribed partition over the members."""
    ids = sorted(m["member_id"] for m in members)
    topics = sorted({t for m in members for t in decode_subscription(m["metadata"]).topics})
    plan: dict[str, dict[str, list[int]]] = {m: {} for m in ids}
    n = 0
    for topic in topics:
        for p in range(TOPIC_PARTITIONS[topic]):
            plan[ids[n % len(ids)]].setdefault(topic, []).append(p)
            n += 1
    return [{"member_id": m, "assignment": encode_assignment(plan[m])} for m in ids]


class Client:
    """What a consumer does against the coordinator, one explicit step at a time."""

    def __init__(
        self,
        cluster: Cluster,
        group: str,
        client_id: str,
        *,
        topics: tuple[str, ...] = ("t",),
        session_ms: int = 30_000,
        rebalance_ms: int = 30_000,
        instance_id: str | None = None,
        version: int = 5,
        protocols: list[dict[str, Any]] | None = None,
        protocol_type: str = "consumer",
    ) -> None:
        self.cluster = cluster
        self.group = group
        self.client_id = client_id
        self.session_ms = session_ms
        self.rebalance_ms = rebalance_ms
        self.instance_id = instance_id
        self.version = version
        self.protocols = protocols if protocols is not None else subscription(*topics)
        self.protocol_type = protocol_type
        self.member_id = ""
        self.generation = -1
        self.last_join: dict[str, Any] = {}
        self.assignment = b""

    async def join_once(self) -> dict[str, Any]:
        body = {
            "group_id": self.group,
            "session_timeout_ms": self.session_ms,
            "rebalance_timeout_ms": self.rebalance_ms,
            "member_id": self.member_id,
            "group_instance_id": self.instance_id,
            "protocol_type": self.protocol_type,
            "protocols": self.protocols,
        }
        return await self.cluster.call(JOIN, self.version, body, client_id=self.client_id)

    async def join(self) -> dict[str, Any]:
        """JoinGroup, doing the MEMBER_ID_REQUIRED second step like real clients."""
        resp = await self.join_once()
        if resp["error_code"] == ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = resp["member_id"]
            resp = await self.join_once()
        if resp["error_code"] == ErrorCode.NONE:
            self.member_id = resp["member_id"]
            self.generation = resp["generation_id"]
        self.last_join = resp
        return resp

    @property
    def is_leader(self) -> bool:
        return bool(self.last_join) and self.last_join["leader"] == self.member_id

    async def sync(self, assignments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        if assignments is None:
            assignments = round_robin(self.last_join["members"]) if self.is_leader else []
        body = {
            "group_id": self.group,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": self.instance_id,
            "protocol_type": self.protocol_type,
            "protocol_name": self.last_join.get("protocol_name"),
            "assignments": assignments,
        }
        resp = await self.cluster.call(SYNC, min(self.version, 5), body)
        if resp["error_code"] == ErrorCode.NONE:
            self.assignment = resp["assignment"]
        return resp

    async def join_and_sync(self) -> dict[str, Any]:
        join = await self.join()
        assert join["error_code"] == ErrorCode.NONE, join
        sync = await self.sync()
        assert sync["error_code"] == ErrorCode.NONE, sync
        return sync

    async def heartbeat(self, generation: int | None = None, member_id: str | None = None) -> int:
        body = {
            "group_id": self.group,
            "generation_id": self.generation if generation is None else generation,
            "member_id": self.member_id if member_id is None else member_id,
            "group_instance_id": self.instance_id,
        }
        return int((await self.cluster.call(HEARTBEAT, 4, body))["error_code"])

    async def leave(self) -> dict[str, Any]:
        body = {
            "group_id": self.group,
            "members": [{"member_id": self.member_id, "group_instance_id": self.instance_id}],
        }
        return await self.cluster.call(LEAVE, 4, body)

    async def commit(
        self,
        offsets: dict[tuple[str, int], int],
        *,
        metadata: str | None = "",
        version: int = 8,
        generation: int | None = None,
        member_id: str | None = None,
    ) -> dict[tuple[str, int], int]:
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, partition), offset in offsets.items():
            topics.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "committed_offset": offset,
                    "committed_leader_epoch": 3,
                    "committed_metadata": metadata,
                }
            )
        body = {
            "group_id": self.group,
            "generation_id_or_member_epoch": self.generation if generation is None else generation,
            "member_id": self.member_id if member_id is None else member_id,
            "group_instance_id": self.instance_id,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        }
        resp = await self.cluster.call(COMMIT, version, body)
        return {
            (t["name"], p["partition_index"]): p["error_code"]
            for t in resp["topics"]
            for p in t["partitions"]
        }


async def fetch_v8(
    cluster: Cluster, group: str, topics: list[dict[str, Any]] | None
) -> dict[str, Any]:
    resp = await cluster.call(FETCH, 8, {"groups": [{"group_id": group, "topics": topics}]})
    (g,) = resp["groups"]
    return g


def offsets_of(topics: list[dict[str, Any]]) -> dict[tuple[str, int], int]:
    return {
        (t["name"], p["partition_index"]): p["committed_offset"]
        for t in topics
        for p in t["partitions"]
    }
