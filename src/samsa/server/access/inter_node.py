"""APIs only nodes call (Raft, registration, heartbeats, ISR changes,
producer-id blocks, transaction markers) need CLUSTER_ACTION on the cluster:
in practice the principal nodes log in with, which must be a super user, as
in Kafka.  Also the changes to features and the quorum (ALTER)."""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access.base import cluster_check
from samsa.server.access.base import guard as guard_one
from samsa.server.connections.router import Router

WRITE_TXN_MARKERS, VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH = 27, 52, 53, 54
ALTER_PARTITION, FETCH_SNAPSHOT, BROKER_REGISTRATION, BROKER_HEARTBEAT = 56, 59, 62, 63
UNREGISTER_BROKER, ALLOCATE_PRODUCER_IDS, UPDATE_RAFT_VOTER = 64, 67, 82
DESCRIBE_QUORUM, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER = 55, 80, 81
CLUSTER_ACTION_APIS = (
    WRITE_TXN_MARKERS,
    VOTE,
    BEGIN_QUORUM_EPOCH,
    END_QUORUM_EPOCH,
    ALTER_PARTITION,
    FETCH_SNAPSHOT,
    BROKER_REGISTRATION,
    BROKER_HEARTBEAT,
    ALLOCATE_PRODUCER_IDS,
    UPDATE_RAFT_VOTER,
)
_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def guard(router: Router, auth: StandardAuthorizer, broker: Any = None) -> None:
    for key in CLUSTER_ACTION_APIS:
        guard_one(router, key, auth, cluster_check(AclOperation.CLUSTER_ACTION, _DENIED))
    for key in (UNREGISTER_BROKER, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER):
        guard_one(router, key, auth, cluster_check(AclOperation.ALTER, _DENIED))
    guard_one(router, DESCRIBE_QUORUM, auth, cluster_check(AclOperation.DESCRIBE, _DENIED))
