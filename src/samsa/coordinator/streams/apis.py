"""The streams group APIs on the wire: StreamsGroupHeartbeat (88), StreamsGroupDescribe
(89) and StreamsGroupTopologyDescriptionUpdate (93), a mixin of the
GroupCoordinator façade (coordinator.py) as classic_apis and offset_apis are.

The heartbeat answers a ``HeartbeatResult``: besides the response, the internal
topics the group still needs, which the broker (not the coordinator) asks the
controller to create, after checking the caller may create them."""

from __future__ import annotations

from typing import Any

from samsa.coordinator.streams.admin import StreamsGroupAdmin
from samsa.coordinator.streams.heartbeat_response import HeartbeatResult
from samsa.coordinator.streams.manager import StreamsGroupManager
from samsa.errors import ErrorCode

Body = dict[str, Any]


class StreamsGroupApis:
    streams: StreamsGroupManager
    streams_admin: StreamsGroupAdmin

    async def streams_group_heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> HeartbeatResult:
        """StreamsGroupHeartbeat (88)."""
        return await self.streams.heartbeat(
            request, version, client_id=client_id, client_host=client_host
        )

    async def streams_group_describe(self, request: Body, version: int) -> Body:
        """StreamsGroupDescribe (89)."""
        include = bool(request.get("include_topology_description")) and version >= 1
        return {
            "throttle_time_ms": 0,
            "groups": [
                self.streams_admin.describe(g, version, include)
                for g in request.get("group_ids") or ()
            ],
        }

    async def streams_group_topology_description_update(self, request: Body, version: int) -> Body:
        """StreamsGroupTopologyDescriptionUpdate (93): Kafka's answer when no topology
        description plugin is configured, which is always Samsa's case."""
        return {
            "throttle_time_ms": 0,
            "error_code": int(ErrorCode.UNSUPPORTED_VERSION),
            "error_message": "The broker has no streams group topology description plugin configured.",
        }
