"""Transaction and producer-id checks (Kafka's KafkaApis): WRITE on the
transactional id for InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
EndTxn and TxnOffsetCommit; for an idempotent producer without one,
IDEMPOTENT_WRITE on the cluster or WRITE on some topic; DESCRIBE to describe
and list transactions; CLUSTER_ACTION for a broker's KIP-890 verification."""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access.base import (
    GROUP,
    TOPIC,
    TRANSACTIONAL_ID,
    can,
    can_cluster,
    names_check,
    visible_only,
    whole,
)
from samsa.server.access.base import (
    guard as guard_one,
)
from samsa.server.access.topics import PLAIN, denied_entry, topic_check
from samsa.server.connections.router import Body, Handler, RequestContext, Router

INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN = 22, 24, 25, 26
TXN_OFFSET_COMMIT, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 28, 65, 66
_Op = AclOperation
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def _txn_allowed(auth: StandardAuthorizer, ctx: RequestContext, transactional_id: str) -> bool:
    return can(auth, ctx, _Op.WRITE, TRANSACTIONAL_ID, transactional_id)


def check_init_producer_id(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    transactional_id = req.get("transactional_id")
    if transactional_id is not None:
        if not _txn_allowed(auth, ctx, transactional_id):
            return whole(TXN_DENIED, producer_id=-1, producer_epoch=-1)
        return inner(ctx, req)
    caller = ctx.caller
    if can_cluster(auth, ctx, _Op.IDEMPOTENT_WRITE):
        return inner(ctx, req)
    if caller is not None and auth.authorize_any(
        caller.principal_name, caller.host, _Op.WRITE, TOPIC
    ):
        return inner(ctx, req)
    return whole(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producer_id=-1, producer_epoch=-1)


def check_add_partitions(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    if ctx.version >= 4:
        # Brokers verifying a transaction for a produce (KIP-890).
        if not can_cluster(auth, ctx, _Op.CLUSTER_ACTION):
            return whole(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results_by_transaction=[])
        return inner(ctx, req)
    topics = req.get("v3_and_below_topics") or []
    if not _txn_allowed(auth, ctx, req["v3_and_below_transactional_id"]):
        denied_topics = {t["name"] for t in topics}
        code = TXN_DENIED
    else:
        denied_topics = {
            t["name"] for t in topics if not can(auth, ctx, _Op.WRITE, TOPIC, t["name"])
        }
        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if not denied_topics:
        return inner(ctx, req)
    results = []
    for topic in topics:
        # As Kafka: the denied partitions fail, the others are not attempted.
        error = code if topic["name"] in denied_topics else ErrorCode.OPERATION_NOT_ATTEMPTED
        results.append(
            {
                "name": topic["name"],
                "results_by_partition": [
                    {"partition_index": p, "partition_error_code": error}
                    for p in topic["partitions"]
                ],
            }
        )
    return {"throttle_time_ms": 0, "error_code": 0, "results_by_topic_v3_and_below": results}


def check_add_offsets(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    if not _txn_allowed(auth, ctx, req["transactional_id"]):
        return whole(TXN_DENIED)
    if not can(auth, ctx, _Op.READ, GROUP, req["group_id"]):
        return whole(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return inner(ctx, req)


def check_end_txn(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
    if not _txn_allowed(auth, ctx, req["transactional_id"]):
        return whole(TXN_DENIED)
    return inner(ctx, req)


_txn_commit_topics = topic_check(_Op.READ)


def check_txn_offset_commit(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    code: int | None = None
    if not _txn_allowed(auth, ctx, req["transactional_id"]):
        code = TXN_DENIED
    elif not can(auth, ctx, _Op.READ, GROUP, req["group_id"]):
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
    if code is not None:
        topics = [denied_entry(PLAIN, t, t["name"], code) for t in req["topics"]]
        return {"throttle_time_ms": 0, "topics": topics}
    return _txn_commit_topics(auth, ctx, req, inner)


def check_list_transactions(
    auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler
) -> Any:
    return visible_only(
        auth, ctx, inner(ctx, req), "transaction_states", "transactional_id", TRANSACTIONAL_ID
    )


def guard(router: Router, auth: StandardAuthorizer, broker: Any) -> None:
    guard_one(router, INIT_PRODUCER_ID, auth, check_init_producer_id)
    guard_one(router, ADD_PARTITIONS_TO_TXN, auth, check_add_partitions)
    guard_one(router, ADD_OFFSETS_TO_TXN, auth, check_add_offsets)
    guard_one(router, END_TXN, auth, check_end_txn)
    guard_one(router, TXN_OFFSET_COMMIT, auth, check_txn_offset_commit)
    guard_one(router, LIST_TRANSACTIONS, auth, check_list_transactions)
    guard_one(
        router,
        DESCRIBE_TRANSACTIONS,
        auth,
        names_check(
            _Op.DESCRIBE,
            TRANSACTIONAL_ID,
            TXN_DENIED,
            "transactional_ids",
            "transaction_states",
            "transactional_id",
        ),
    )
