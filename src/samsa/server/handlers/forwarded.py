"""Controller and quorum APIs a broker forwards: elections, reassignments, the quorum.

ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments,
UpdateFeatures, UnregisterBroker, UnregisterController, DescribeQuorum,
AddRaftVoter and RemoveRaftVoter are answered by the active
controller; a broker passes them on as Kafka's brokers do, so tools may use any
bootstrap address.  Where this listener also serves the quorum (the single-node
default) the quorum handlers registered first stay in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.errors import KafkaError
from samsa.server.connections.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

ELECT_LEADERS, ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 43, 45, 46
DESCRIBE_QUORUM, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER = 55, 80, 81
UPDATE_FEATURES, UNREGISTER_BROKER, UNREGISTER_CONTROLLER = 57, 64, 94
FORWARDED = (
    ELECT_LEADERS,
    UPDATE_FEATURES,
    UNREGISTER_BROKER,
    UNREGISTER_CONTROLLER,
    ALTER_PARTITION_REASSIGNMENTS,
    LIST_PARTITION_REASSIGNMENTS,
    DESCRIBE_QUORUM,
    ADD_RAFT_VOTER,
    REMOVE_RAFT_VOTER,
)


def register(router: Router, broker: BrokerApi) -> None:
    for api_key in FORWARDED:
        if router.handles(api_key):
            continue
        router.register(
            api_key,
            lambda ctx, req, key=api_key: forward(broker, key, ctx, req),  # type: ignore[misc]
        )


async def forward(broker: BrokerApi, api_key: int, ctx: RequestContext, req: Body) -> Body:
    try:
        return await broker.forward(api_key, ctx.version, req)
    except KafkaError as exc:
        return {
            "throttle_time_ms": 0,
            "error_code": exc.code,
            "error_message": str(exc),
            "replica_election_results": [],
            "responses": [],
            "topics": [],
            "nodes": [],
        }
