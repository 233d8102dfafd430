"""The group coordinator façade: one async method per Kafka API, dicts in and out.

The broker decodes a request into a dict (snake_case of Kafka's JSON field
names), calls the method for its API key with the request version, and encodes
the returned dict with the response schema of that version.  Version
differences live only here — the layers below (``membership``, ``offsets``,
``admin``) work on plain values — so adding a version touches one file.

Composition: ``GroupRegistry`` (state, store, replay) is shared by
``Rebalancer`` (timers, transitions), ``Membership`` (Join/Sync/Heartbeat/
Leave), ``OffsetManager`` (commit/fetch/delete/expire) and ``GroupAdmin``
(list/describe/delete groups).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from samsa.coordinator.admin import GroupAdmin
from samsa.coordinator.config import GroupConfig
from samsa.coordinator.consumer.admin import ConsumerGroupAdmin
from samsa.coordinator.consumer.config import ConsumerGroupConfig
from samsa.coordinator.consumer.manager import ConsumerGroupManager, TopicLookup
from samsa.coordinator.group import GroupState, JoinResult, SyncResult
from samsa.coordinator.membership import JoinRequest, Membership
from samsa.coordinator.offsets import OffsetManager, OffsetToCommit, PartitionExists
from samsa.coordinator.rebalance import Rebalancer, TransitionListener
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.share import ShareGroupConfig, ShareGroupManager
from samsa.coordinator.store import OffsetsStore
from samsa.coordinator.txn_offsets import TxnOffsets
from samsa.errors import ErrorCode

Body = dict[str, Any]

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _partition_errors(
    topics: Iterable[Body], results: Mapping[tuple[str, int], ErrorCode]
) -> list[Body]:
    """Echo the request's topics and partitions, each with its error code."""
    return [
        {
            "name": t["name"],
            "partitions": [
                {
                    "partition_index": p["partition_index"],
                    "error_code": int(results[(t["name"], p["partition_index"])]),
                }
                for p in t.get("partitions") or ()
            ],
        }
        for t in topics
    ]


def _always(topic: str, partition: int) -> bool:
    return True


def _no_topics() -> dict[str, tuple[bytes, int]]:
    return {}


def coordinator_key_type_supported(key_type: int) -> bool:
    """FindCoordinator key types this broker coordinates: groups (0) here and
    transactional ids (1) in ``samsa.transaction``."""
    return key_type in (KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION)


class GroupCoordinator:
    """Kafka's classic group coordinator for the partitions of ``__consumer_offsets`` we own."""

    def __init__(
        self,
        store: OffsetsStore,
        config: GroupConfig,
        *,
        time_ms: Callable[[], int] = _wall_clock_ms,
        partition_exists: PartitionExists = _always,
        on_transition: TransitionListener | None = None,
        consumer_config: ConsumerGroupConfig | None = None,
        topics: TopicLookup = _no_topics,
        share_config: ShareGroupConfig | None = None,
    ) -> None:
        self.config = config
        self.registry = GroupRegistry(store, config, time_ms)
        self.rebalancer = Rebalancer(self.registry, on_transition)
        self.membership = Membership(self.registry, self.rebalancer)
        self.offsets = OffsetManager(self.registry, self.rebalancer, partition_exists)
        self.admin = GroupAdmin(self.registry, self.rebalancer)
        self.txn_offsets = TxnOffsets(self.registry, self.offsets)
        self.consumer = ConsumerGroupManager(
            self.registry, consumer_config or ConsumerGroupConfig(), topics
        )
        self.consumer_admin = ConsumerGroupAdmin(self.consumer)
        self.offsets.in_use_elsewhere = self.consumer_admin.has_members
        self.share = ShareGroupManager(
            self.registry, share_config or ShareGroupConfig(), topics, self._not_share_group
        )

    # ------------------------------------------------------------ lifecycle

    def partition_for(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of a group (Kafka's placement)."""
        return self.registry.partition_for(group_id)

    def is_loading(self, partition: int) -> bool:
        return partition in self.registry.loading

    def owns(self, partition: int) -> bool:
        return partition in self.registry.owned

    async def load(self, partition: int) -> None:
        """Become coordinator for ``partition``: replay its records; its groups answer LOAD_IN_PROGRESS meanwhile."""
        await self.registry.load(partition)
        self.consumer.loaded(partition)

    async def load_all(self) -> None:
        """Load every partition (a single broker coordinates all groups)."""
        for partition in range(self.config.offsets_topic_num_partitions):
            await self.load(partition)

    def unload(self, partition: int) -> None:
        """Stop coordinating ``partition``: waiting requests get NOT_COORDINATOR and retry elsewhere."""
        self.consumer.unload(partition)
        self.share.unload(partition)
        for group in self.registry.unload(partition):
            self.rebalancer.cancel_all(group)
            for member in group.members.values():
                member.complete_join(JoinResult(ErrorCode.NOT_COORDINATOR, member.member_id))
                member.complete_sync(SyncResult(ErrorCode.NOT_COORDINATOR))
            group.state = GroupState.DEAD
        self.txn_offsets.forget_partition(partition)

    async def shutdown(self) -> None:
        """Unload everything and let in-flight background writes finish."""
        for partition in sorted(self.registry.owned):
            self.unload(partition)
        self.consumer.shutdown()
        self.share.shutdown()
        await self.rebalancer.drain()

    async def expire_offsets(self, now_ms: int | None = None) -> int:
        """Tombstone offsets older than ``offsets.retention.minutes``; call periodically."""
        return await self.offsets.expire(self.registry.time_ms() if now_ms is None else now_ms)

    async def on_partitions_deleted(self, partitions: set[tuple[str, int]]) -> int:
        """Topic partitions were deleted: tombstone every committed offset for them."""
        return await self.offsets.delete_partitions(partitions)

    # ----------------------------------------------------------- membership

    async def join_group(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> Body:
        """JoinGroup (11); ``client_id``/``client_host`` come from the request header and socket."""
        refused = await self._classic_join_refused(request["group_id"])
        if refused is not None:
            return self._join_error(refused, request, version)
        session = request["session_timeout_ms"]
        rebalance = request.get("rebalance_timeout_ms", -1)
        result = await self.membership.join(
            JoinRequest(
                group_id=request["group_id"],
                member_id=request.get("member_id") or "",
                group_instance_id=request.get("group_instance_id") if version >= 5 else None,
                session_timeout_ms=session,
                rebalance_timeout_ms=session if rebalance is None or rebalance < 0 else rebalance,
                protocol_type=request["protocol_type"],
                protocols=[
                    (p["name"], bytes(p["metadata"])) for p in request.get("protocols") or ()
                ],
                client_id=client_id,
                client_host=client_host,
                require_known_member_id=version >= 4,
                supports_skip_assignment=version >= 9,
                reason=request.get("reason"),
            )
        )
        protocol_name = result.protocol_name
        if version < 7 and protocol_name is None:
            protocol_name = ""
        return {
            "throttle_time_ms": 0,
            "error_code": int(result.error),
            "generation_id": result.generation_id,
            "protocol_type": result.protocol_type,
            "protocol_name": protocol_name,
            "leader": result.leader,
            "skip_assignment": result.skip_assignment,
            "member_id": result.member_id,
            "members": [
                {"member_id": m, "group_instance_id": i, "metadata": meta}
                for m, i, meta in result.members
            ],
        }

    async def _classic_join_refused(self, group_id: str) -> ErrorCode | None:
        """A consumer group of that id: refused while it has members; an empty one is
        deleted so the classic group can start over (its offsets stay)."""
        error = await self.consumer_admin.delete(group_id)
        if error is None or error is ErrorCode.NONE:
            return None
        if error is ErrorCode.NON_EMPTY_GROUP:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return error

    @staticmethod
    def _join_error(error: ErrorCode, request: Body, version: int) -> Body:
        return {
            "throttle_time_ms": 0,
            "error_code": int(error),
            "generation_id": -1,
            "protocol_type": None,
            "protocol_name": None if version >= 7 else "",
            "leader": "",
            "skip_assignment": False,
            "member_id": request.get("member_id") or "",
            "members": [],
        }

    async def sync_group(self, request: Body, version: int) -> Body:
        """SyncGroup (14): the leader hands in assignments, everyone gets theirs."""
        result = await self.membership.sync(
            request["group_id"],
            request["generation_id"],
            request["member_id"],
            request.get("group_instance_id") if version >= 3 else None,
            request.get("protocol_type") if version >= 5 else None,
            request.get("protocol_name") if version >= 5 else None,
            {a["member_id"]: bytes(a["assignment"]) for a in request.get("assignments") or ()},
        )
        return {
            "throttle_time_ms": 0,
            "error_code": int(result.error),
            "protocol_type": result.protocol_type,
            "protocol_name": result.protocol_name,
            "assignment": result.assignment,
        }

    async def heartbeat(self, request: Body, version: int) -> Body:
        """Heartbeat (12): keeps the session alive and tells members when to rejoin."""
        error = self.membership.heartbeat(
            request["group_id"],
            request["generation_id"],
            request["member_id"],
            request.get("group_instance_id") if version >= 3 else None,
        )
        return {"throttle_time_ms": 0, "error_code": int(error)}

    async def leave_group(self, request: Body, version: int) -> Body:
        """LeaveGroup (13): one member (v0-2) or a batch by member or instance id (v3+)."""
        if version >= 3:
            leaving = [
                (m.get("member_id") or "", m.get("group_instance_id"))
                for m in request.get("members") or ()
            ]
        else:
            leaving = [(request.get("member_id") or "", None)]
        top, errors = self.membership.leave(request["group_id"], leaving)
        if version < 3 and top is ErrorCode.NONE:
            top = errors[0]
        return {
            "throttle_time_ms": 0,
            "error_code": int(top),
            "members": [
                {"member_id": m, "group_instance_id": i, "error_code": int(e)}
                for (m, i), e in zip(leaving, errors, strict=True)
            ],
        }

    # -------------------------------------------------------------- offsets

    async def offset_commit(self, request: Body, version: int) -> Body:
        """OffsetCommit (8): durable once answered; errors per partition."""
        topics = request.get("topics") or ()
        offsets = [
            OffsetToCommit(
                t["name"],
                p["partition_index"],
                p["committed_offset"],
                p.get("committed_leader_epoch", -1) if version >= 6 else -1,
                p.get("committed_metadata"),
            )
            for t in topics
            for p in t.get("partitions") or ()
        ]
        retention = request.get("retention_time_ms", -1) if 2 <= version <= 4 else -1
        generation = request.get("generation_id_or_member_epoch", -1)
        member_id = request.get("member_id") or ""
        instance_id = request.get("group_instance_id") if version >= 7 else None
        consumer_check = self.consumer_admin.check_commit(
            request["group_id"], member_id, generation
        )
        if consumer_check is not None and consumer_check is not ErrorCode.NONE:
            failed = {(o.topic, o.partition): consumer_check for o in offsets}
            return {"throttle_time_ms": 0, "topics": _partition_errors(topics, failed)}
        if consumer_check is not None:
            # Checked against member epochs: stored as a standalone commit would be.
            generation, member_id, instance_id = -1, "", None
        results = await self.offsets.commit(
            request["group_id"],
            generation,
            member_id,
            instance_id,
            retention if retention is not None else -1,
            offsets,
        )
        return {
            "throttle_time_ms": 0,
            "topics": _partition_errors(topics, results),
        }

    async def txn_offset_commit(self, request: Body, version: int) -> Body:
        """TxnOffsetCommit (28): offsets the group sees once the transaction commits."""
        topics = request.get("topics") or ()
        error = self.registry.check(request["group_id"], allow_empty=True)
        if error is not None:
            results = {
                (t["name"], p["partition_index"]): error for t in topics for p in t["partitions"]
            }
        else:
            results = await self.txn_offsets.commit(
                request["group_id"],
                request["producer_id"],
                request["producer_epoch"],
                request.get("generation_id", -1),
                request.get("member_id") or "",
                request.get("group_instance_id"),
                [
                    OffsetToCommit(
                        t["name"],
                        p["partition_index"],
                        p["committed_offset"],
                        p.get("committed_leader_epoch", -1),
                        p.get("committed_metadata"),
                    )
                    for t in topics
                    for p in t.get("partitions") or ()
                ],
            )
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {
                            "partition_index": p["partition_index"],
                            "error_code": int(results[(t["name"], p["partition_index"])]),
                        }
                        for p in t["partitions"]
                    ],
                }
                for t in topics
            ],
        }

    def complete_transaction(self, partition: int, producer_id: int, commit: bool) -> int:
        """A COMMIT/ABORT marker reached ``__consumer_offsets-partition``."""
        return self.txn_offsets.complete(partition, producer_id, commit)

    async def offset_fetch(self, request: Body, version: int) -> Body:
        """OffsetFetch (9): v1-7 one group, v8+ many; null topics mean every committed partition."""
        if version >= 8:
            return {
                "throttle_time_ms": 0,
                "groups": [
                    self._fetch_member_group(g, version) for g in request.get("groups") or ()
                ],
            }
        single = self._fetch_group(request["group_id"], request.get("topics"), version)
        return {
            "throttle_time_ms": 0,
            "topics": single["topics"],
            "error_code": single["error_code"],
        }

    def _fetch_member_group(self, group: Body, version: int) -> Body:
        """One group of OffsetFetch v8+; v9 members of consumer groups prove their epoch."""
        error = self.consumer_admin.check_fetch(
            group["group_id"], group.get("member_id"), group.get("member_epoch", -1)
        )
        if error is not ErrorCode.NONE:
            return {"group_id": group["group_id"], "topics": [], "error_code": int(error)}
        return self._fetch_group(group["group_id"], group.get("topics"), version)

    def _fetch_group(self, group_id: str, topics: list[Body] | None, version: int) -> Body:
        wanted = (
            None
            if topics is None
            else [(t["name"], p) for t in topics for p in t.get("partition_indexes") or ()]
        )
        error, fetched = self.offsets.fetch(group_id, wanted)
        if error is not ErrorCode.NONE and version < 2:
            # v1 has no group-level error: report it on every requested partition.
            by_topic_err: dict[str, list[Body]] = {}
            for t, p in wanted or ():
                by_topic_err.setdefault(t, []).append(
                    {
                        "partition_index": p,
                        "committed_offset": -1,
                        "committed_leader_epoch": -1,
                        "metadata": "",
                        "error_code": int(error),
                    }
                )
            return {
                "group_id": group_id,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic_err.items()],
                "error_code": int(error),
            }
        by_topic: dict[str, list[Body]] = {}
        for f in fetched:
            by_topic.setdefault(f.topic, []).append(
                {
                    "partition_index": f.partition,
                    "committed_offset": f.offset,
                    "committed_leader_epoch": f.leader_epoch,
                    "metadata": f.metadata,
                    "error_code": int(f.error),
                }
            )
        return {
            "group_id": group_id,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
            "error_code": int(error),
        }

    async def offset_delete(self, request: Body, version: int) -> Body:
        """OffsetDelete (47): remove offsets of topics the group no longer consumes."""
        topics = request.get("topics") or ()
        wanted = [
            (t["name"], p["partition_index"]) for t in topics for p in t.get("partitions") or ()
        ]
        # A consumer group's members still read their topics: those offsets stay.
        subscribed = self.consumer_admin.subscribed_topics(request["group_id"])
        refused = {tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in wanted if tp[0] in subscribed}
        wanted = [tp for tp in wanted if tp not in refused]
        error, results = await self.offsets.delete(request["group_id"], wanted)
        if error is not ErrorCode.NONE:
            return {"error_code": int(error), "throttle_time_ms": 0, "topics": []}
        results.update(refused)
        return {
            "error_code": 0,
            "throttle_time_ms": 0,
            "topics": _partition_errors(topics, results),
        }

    # ---------------------------------------------------------------- admin

    async def list_groups(self, request: Body, version: int) -> Body:
        """ListGroups (16): states filter from v4, types filter from v5."""
        states = request.get("states_filter") if version >= 4 else None
        types = request.get("types_filter") if version >= 5 else None
        error, groups = self.admin.list(states, types)
        consumer_groups = self.consumer.groups
        listed = [
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type,
                "group_state": g.state,
                "group_type": g.group_type,
            }
            for g in groups
            if g.group_id not in consumer_groups
        ]
        if not types or "consumer" in {t.lower() for t in types}:
            listed += self.consumer_admin.listed({s.lower() for s in states} if states else None)
        if not types or "share" in {t.lower() for t in types}:
            wanted = {s.lower() for s in states} if states else None
            listed += [
                {"group_id": g, "protocol_type": "share", "group_state": st, "group_type": "share"}
                for g, st in self.share.list_entries()
                if wanted is None or st.lower() in wanted
            ]
        return {"throttle_time_ms": 0, "error_code": int(error), "groups": listed}

    async def describe_groups(self, request: Body, version: int) -> Body:
        """DescribeGroups (15): unknown groups are reported Dead, as Kafka does before v6."""
        out = []
        for group_id in request.get("groups") or ():
            consumer_group = self.consumer_admin.get(group_id)
            if consumer_group is not None and self.registry.check(group_id) is None:
                out.append(self.consumer_admin.described_as_classic(consumer_group))
                continue
            d = self.admin.describe(group_id)
            out.append(
                {
                    "error_code": int(d.error),
                    "group_id": d.group_id,
                    "group_state": d.state,
                    "protocol_type": d.protocol_type,
                    "protocol_data": d.protocol_data,
                    "members": [
                        {
                            "member_id": m.member_id,
                            "group_instance_id": m.group_instance_id,
                            "client_id": m.client_id,
                            "client_host": m.client_host,
                            "member_metadata": m.metadata,
                            "member_assignment": m.assignment,
                        }
                        for m in d.members
                    ],
                }
            )
        return {"throttle_time_ms": 0, "groups": out}

    async def delete_groups(self, request: Body, version: int) -> Body:
        """DeleteGroups (42): NON_EMPTY_GROUP while members exist, GROUP_ID_NOT_FOUND if unknown."""
        results = []
        for group_id in request.get("groups_names") or ():
            consumer_error = await self.consumer_admin.delete(group_id)
            if consumer_error is not None and consumer_error is not ErrorCode.NONE:
                results.append({"group_id": group_id, "error_code": int(consumer_error)})
                continue
            error = await self.admin.delete(group_id)
            if consumer_error is ErrorCode.NONE and error is ErrorCode.GROUP_ID_NOT_FOUND:
                error = ErrorCode.NONE  # it had no offsets
            results.append({"group_id": group_id, "error_code": int(error)})
        return {"throttle_time_ms": 0, "results": results}

    # ----------------------------------------------------- KIP-848 groups

    async def consumer_group_heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> Body:
        """ConsumerGroupHeartbeat (68)."""
        return await self.consumer.heartbeat(
            request, version, client_id=client_id, client_host=client_host
        )

    async def consumer_group_describe(self, request: Body, version: int) -> Body:
        """ConsumerGroupDescribe (69)."""
        return {
            "throttle_time_ms": 0,
            "groups": [self.consumer_admin.describe(g) for g in request.get("group_ids") or ()],
        }

    # ------------------------------------------------------ share groups

    def _not_share_group(self, group_id: str) -> bool:
        return group_id in self.consumer.groups or group_id in self.registry.groups

    async def share_group_heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> Body:
        """ShareGroupHeartbeat (76)."""
        return self.share.heartbeat(request, client_id=client_id, client_host=client_host)

    async def share_group_describe(self, request: Body, version: int) -> Body:
        """ShareGroupDescribe (77)."""
        return {
            "throttle_time_ms": 0,
            "groups": [self.share.describe(g) for g in request.get("group_ids") or ()],
        }
