"""The classic group protocol on the wire: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
ListGroups, DescribeGroups and DeleteGroups, dicts in and out.

A mixin of the GroupCoordinator façade (coordinator.py), apart from the
offset APIs (offset_apis) because the two families change for different
reasons: these follow the rebalance protocol's versions (static members,
known member ids, skip-assignment), those the offsets' (leader epochs, many
groups per request).  Each method maps one request version onto the plain
values of ``membership`` and ``admin``, and answers for KIP-848 and share
groups of the same id where Kafka does: a member of the classic protocol
joining a consumer group that has members is served inside it
(``consumer/classic_members``, KIP-848's online migration).
"""

from __future__ import annotations

from typing import Any

from samsa.coordinator.admin import GroupAdmin
from samsa.coordinator.consumer.admin import ConsumerGroupAdmin
from samsa.coordinator.consumer.classic_members import ClassicMembers
from samsa.coordinator.consumer.group import ConsumerGroup
from samsa.coordinator.consumer.manager import ConsumerGroupManager
from samsa.coordinator.group import JoinResult, SyncResult
from samsa.coordinator.membership import JoinRequest, Membership
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.share import ShareGroupManager
from samsa.coordinator.streams import StreamsGroupAdmin
from samsa.errors import ErrorCode

Body = dict[str, Any]


class ClassicGroupApis:
    """JoinGroup, SyncGroup, Heartbeat, LeaveGroup and the group admin APIs."""

    registry: GroupRegistry
    membership: Membership
    admin: GroupAdmin
    consumer: ConsumerGroupManager
    consumer_admin: ConsumerGroupAdmin
    classic_members: ClassicMembers
    share: ShareGroupManager
    streams_admin: StreamsGroupAdmin

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
        join = JoinRequest(
            group_id=request["group_id"],
            member_id=request.get("member_id") or "",
            group_instance_id=request.get("group_instance_id") if version >= 5 else None,
            session_timeout_ms=session,
            rebalance_timeout_ms=session if rebalance is None or rebalance < 0 else rebalance,
            protocol_type=request["protocol_type"],
            protocols=[(p["name"], bytes(p["metadata"])) for p in request.get("protocols") or ()],
            client_id=client_id,
            client_host=client_host,
            require_known_member_id=version >= 4,
            supports_skip_assignment=version >= 9,
            reason=request.get("reason"),
        )
        consumer_group = self._live_consumer_group(join.group_id)
        result: JoinResult
        if consumer_group is None:
            result = await self.membership.join(join)
        elif not (
            self.registry.config.group_min_session_timeout_ms
            <= session
            <= self.registry.config.group_max_session_timeout_ms
        ):
            result = JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, join.member_id)
        else:
            result = await self.classic_members.join(consumer_group, join)
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
        """The coordinator's own errors; a streams group of that id with members
        (INCONSISTENT_GROUP_PROTOCOL); and an empty consumer or streams group of that id
        is deleted so the classic group can start over (its offsets stay)."""
        error = self.registry.check(group_id)
        if error is not None:
            return error
        error = await self.streams_admin.delete(group_id)
        if error is ErrorCode.NON_EMPTY_GROUP:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if error is not None and error is not ErrorCode.NONE:
            return error
        group = self.consumer.groups.get(group_id)
        if group is None or group.members:
            return None
        error = await self.consumer_admin.delete(group_id)
        return None if error is None or error is ErrorCode.NONE else error

    def _live_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """A consumer group with members serves classic members itself."""
        group = self.consumer.groups.get(group_id)
        if group is None or not group.members or self.registry.check(group_id) is not None:
            return None
        return group

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
        protocol_type = request.get("protocol_type") if version >= 5 else None
        protocol_name = request.get("protocol_name") if version >= 5 else None
        instance_id = request.get("group_instance_id") if version >= 3 else None
        consumer_group = self._live_consumer_group(request["group_id"])
        result: SyncResult
        if consumer_group is not None:
            result = self.classic_members.sync(
                consumer_group,
                request["generation_id"],
                request["member_id"],
                instance_id,
                protocol_type,
                protocol_name,
            )
        else:
            result = await self.membership.sync(
                request["group_id"],
                request["generation_id"],
                request["member_id"],
                instance_id,
                protocol_type,
                protocol_name,
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
        instance_id = request.get("group_instance_id") if version >= 3 else None
        consumer_group = self._live_consumer_group(request["group_id"])
        if consumer_group is not None:
            error = self.classic_members.heartbeat(
                consumer_group, request["generation_id"], request["member_id"], instance_id
            )
        else:
            error = self.membership.heartbeat(
                request["group_id"], request["generation_id"], request["member_id"], instance_id
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
        consumer_group = self._live_consumer_group(request["group_id"])
        if consumer_group is not None:
            top, errors = (
                ErrorCode.NONE,
                await self.classic_members.leave(consumer_group, leaving),
            )
        else:
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

    # ---------------------------------------------------------------- admin

    async def list_groups(self, request: Body, version: int) -> Body:
        """ListGroups (16): states filter from v4, types filter from v5."""
        states = request.get("states_filter") if version >= 4 else None
        types = request.get("types_filter") if version >= 5 else None
        error, groups = self.admin.list(states, types)
        modern = {*self.consumer.groups, *self.streams_admin.manager.groups}
        listed = [
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type,
                "group_state": g.state,
                "group_type": g.group_type,
            }
            for g in groups
            if g.group_id not in modern
        ]
        if not types or "consumer" in {t.lower() for t in types}:
            listed += self.consumer_admin.listed({s.lower() for s in states} if states else None)
        if not types or "streams" in {t.lower() for t in types}:
            listed += self.streams_admin.listed({s.lower() for s in states} if states else None)
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
            if (
                self.streams_admin.get(group_id) is not None
                and self.registry.check(group_id) is None
            ):
                out.append(_not_classic(group_id, version))
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
            if consumer_error is None:
                consumer_error = await self.streams_admin.delete(group_id)
            if consumer_error is not None and consumer_error is not ErrorCode.NONE:
                results.append({"group_id": group_id, "error_code": int(consumer_error)})
                continue
            error = await self.admin.delete(group_id)
            if consumer_error is ErrorCode.NONE and error is ErrorCode.GROUP_ID_NOT_FOUND:
                error = ErrorCode.NONE  # it had no offsets
            results.append({"group_id": group_id, "error_code": int(error)})
        return {"throttle_time_ms": 0, "results": results}


def _not_classic(group_id: str, version: int) -> Body:
    """DescribeGroups of a streams group: Kafka finds no classic group of that id (Dead
    before v6, GROUP_ID_NOT_FOUND with its reason from v6)."""
    return {
        "error_code": int(ErrorCode.GROUP_ID_NOT_FOUND) if version >= 6 else 0,
        "error_message": f"Group {group_id} is not a classic group." if version >= 6 else None,
        "group_id": group_id,
        "group_state": "Dead",
        "protocol_type": "",
        "protocol_data": "",
        "members": [],
    }
