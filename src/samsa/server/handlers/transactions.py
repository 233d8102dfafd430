"""Transaction APIs (24-28, and InitProducerId with a transactional id): adapters onto
the transaction coordinator, the group coordinator and the partitions.

While ``__transaction_state`` is being created or loaded the coordinator's APIs
answer COORDINATOR_LOAD_IN_PROGRESS (retriable), as Kafka does; TxnOffsetCommit
goes to the group coordinator; WriteTxnMarkers, sent by a coordinator to the
leaders of a transaction's partitions, writes the markers here.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.coordinators.txn_wiring import ask_coordinator, write_local_marker
from samsa.server.handlers.groups import loading_response

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

ADD_PARTITIONS_TO_TXN = 24
ADD_OFFSETS_TO_TXN = 25
END_TXN = 26
WRITE_TXN_MARKERS = 27
TXN_OFFSET_COMMIT = 28
OFFSET_COMMIT = 8
END_TXN_V2 = 5
"""EndTxn v5+ is a transaction version 2 client: the epoch is bumped on every commit/abort."""
TXN_OFFSET_COMMIT_V2 = 5


def register(router: Router, broker: BrokerApi) -> None:
    router.register(ADD_PARTITIONS_TO_TXN, lambda ctx, req: add_partitions(broker, ctx, req))
    router.register(ADD_OFFSETS_TO_TXN, lambda ctx, req: add_offsets(broker, ctx, req))
    router.register(END_TXN, lambda ctx, req: end_txn(broker, ctx, req))
    router.register(WRITE_TXN_MARKERS, lambda ctx, req: write_markers(broker, ctx, req))
    router.register(TXN_OFFSET_COMMIT, lambda ctx, req: txn_offset_commit(broker, ctx, req))


def _coordinator(broker: BrokerApi) -> tuple[Any, ErrorCode | None]:
    error = broker.ensure_transaction_coordinator()
    return broker.transactions, error


async def init_transactional_producer_id(broker: BrokerApi, req: Body) -> Body:
    """InitProducerId for a transactional id (the producer_ids handler hands it here)."""
    coordinator, error = _coordinator(broker)
    if error is None:
        error, producer_id, epoch = await coordinator.init_producer_id(
            req["transactional_id"],
            req["transaction_timeout_ms"],
            req.get("producer_id", -1),
            req.get("producer_epoch", -1),
        )
    else:
        producer_id = epoch = -1
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "producer_id": producer_id,
        "producer_epoch": epoch,
    }


async def add_partitions(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    if ctx.version >= 4:
        return await add_partitions_batched(broker, req)
    topics = req.get("v3_and_below_topics") or ()
    wanted = [(t["name"], p) for t in topics for p in t["partitions"]]
    results: dict[tuple[str, int], ErrorCode] = {}
    image = broker.image
    unknown = [
        tp
        for tp in wanted
        if tp[0] not in image.topics or tp[1] not in image.topics[tp[0]].partitions
    ]
    coordinator, error = _coordinator(broker)
    if error is None and unknown:
        # Kafka refuses the whole request: the unknown ones and OPERATION_NOT_ATTEMPTED.
        results = dict.fromkeys(wanted, ErrorCode.OPERATION_NOT_ATTEMPTED)
        results.update(dict.fromkeys(unknown, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
    else:
        if error is None:
            error = await coordinator.add_partitions(
                req["v3_and_below_transactional_id"],
                req["v3_and_below_producer_id"],
                req["v3_and_below_producer_epoch"],
                wanted,
            )
        results = dict.fromkeys(wanted, error)
    return {
        "throttle_time_ms": 0,
        "results_by_topic_v3_and_below": [
            {
                "name": t["name"],
                "results_by_partition": [
                    {"partition_index": p, "partition_error_code": results[(t["name"], p)]}
                    for p in t["partitions"]
                ],
            }
            for t in topics
        ],
    }


async def add_partitions_batched(broker: BrokerApi, req: Body) -> Body:
    """v4+, from partition leaders: ``verify_only`` asks whether the partitions are in
    the transaction (KIP-890); otherwise they are added."""
    coordinator, error = _coordinator(broker)
    results = []
    for txn in req["transactions"]:
        tps = [(t["name"], p) for t in txn["topics"] for p in t["partitions"]]
        if error is not None:
            codes = dict.fromkeys(tps, error)
        elif txn["verify_only"]:
            codes = coordinator.verify(
                txn["transactional_id"], txn["producer_id"], txn["producer_epoch"], tps
            )
        else:
            code = await coordinator.add_partitions(
                txn["transactional_id"], txn["producer_id"], txn["producer_epoch"], tps
            )
            codes = dict.fromkeys(tps, code)
        by_topic: dict[str, list[Body]] = {}
        for (topic, index), code in codes.items():
            by_topic.setdefault(topic, []).append(
                {"partition_index": index, "partition_error_code": code}
            )
        results.append(
            {
                "transactional_id": txn["transactional_id"],
                "topic_results": [
                    {"name": t, "results_by_partition": ps} for t, ps in by_topic.items()
                ],
            }
        )
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results_by_transaction": results}


async def add_offsets(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    """The group's ``__consumer_offsets`` partition joins the transaction."""
    coordinator, error = _coordinator(broker)
    if error is None:
        error = broker.ensure_group_coordinator()
    if error is None:
        partition = broker.groups.partition_for(req["group_id"])
        error = await coordinator.add_partitions(
            req["transactional_id"],
            req["producer_id"],
            req["producer_epoch"],
            [("__consumer_offsets", partition)],
        )
    return {"throttle_time_ms": 0, "error_code": error}


async def end_txn(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    coordinator, error = _coordinator(broker)
    producer_id, producer_epoch = -1, -1
    args = (req["transactional_id"], req["producer_id"], req["producer_epoch"], req["committed"])
    if error is None and ctx.version >= END_TXN_V2:
        error, producer_id, producer_epoch = await coordinator.end_txn_v2(*args)
    elif error is None:
        error = await coordinator.end_txn(*args)
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
    }


async def txn_offset_commit(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    error = broker.ensure_group_coordinator()
    if error is not None:
        # TxnOffsetCommit answers in OffsetCommit's shape: topics of partition errors.
        return loading_response(OFFSET_COMMIT, ctx.version, req, error)
    if ctx.version >= TXN_OFFSET_COMMIT_V2:
        error = await _add_offsets_partition(broker, req)
        if error is not ErrorCode.NONE:
            return loading_response(OFFSET_COMMIT, ctx.version, req, error)
    result: Body = await broker.groups.txn_offset_commit(req, ctx.version)
    return result


async def _add_offsets_partition(broker: BrokerApi, req: Body) -> ErrorCode:
    """Transaction version 2: the group's offsets partition joins the transaction
    here, as AddOffsetsToTxn would have; coordinator errors a client would retry
    become COORDINATOR_NOT_AVAILABLE (it looks the coordinator up again)."""
    tp = ("__consumer_offsets", broker.groups.partition_for(req["group_id"]))
    codes = await ask_coordinator(
        broker, req["transactional_id"], req["producer_id"], req["producer_epoch"], [tp], True
    )
    code = codes[tp]
    if code in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code is ErrorCode.INVALID_PRODUCER_ID_MAPPING:
        return ErrorCode.INVALID_TXN_STATE
    return code


async def write_markers(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    """Markers a coordinator sends to this broker as leader of the partitions."""
    answers = []
    for marker in req["markers"]:
        tps = [(t["name"], i) for t in marker["topics"] for i in t["partition_indexes"]]
        codes = await asyncio.gather(
            *(
                write_local_marker(
                    broker,
                    tp,
                    marker["producer_id"],
                    marker["producer_epoch"],
                    marker["coordinator_epoch"],
                    marker["transaction_result"],
                )
                for tp in tps
            )
        )
        by_topic: dict[str, list[Body]] = {}
        for (topic, index), code in zip(tps, codes, strict=True):
            by_topic.setdefault(topic, []).append({"partition_index": index, "error_code": code})
        answers.append(
            {
                "producer_id": marker["producer_id"],
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
            }
        )
    return {"markers": answers}
