"""Produce (key 0): validate batch headers and append them.

Records are not decoded, except on compacted topics, where every record must
have a key (INVALID_RECORD otherwise, as Kafka answers).  On a topic with
``confluent.value.schema.validation`` (or ``.key.``) the five bytes in front
of each value (key) are checked against the schema registry's ids
(``replication.leader.schema_validation``): a request that needs them waits
until this broker has read ``_schemas`` (the first time only), and a batch
refused for an id the registry does not hold is checked once more after
reading ``_schemas`` to its end, so a schema registered just before the
produce is never missed.  The connection handles nothing else meanwhile, so
the producer's batches stay in order.

Versions 0-2 are advertised (librdkafka <= 2.11 only compresses when the broker
lists Produce v0) but refused with UNSUPPORTED_VERSION, as Kafka 4 does.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, InvalidRecordError, KafkaError
from samsa.protocol.batches.record_batch import BATCH_HEADER_SIZE, read_batch_header
from samsa.replication.leader.schema_validation import SchemaIdRefusal
from samsa.replication.partition import Partition
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.coordinators.txn_wiring import verify_partitions
from samsa.server.handlers.cluster import INTERNAL_TOPICS

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

log = logging.getLogger("samsa.server")

API_KEY = 0
MIN_SUPPORTED_VERSION = 3
IMPLICIT_ADD_VERSION = 12
"""Produce v12+ comes from a transaction version 2 producer (KIP-890 part 2): the
leader adds a partition to the transaction on its first write there."""


def register(router: Router, broker: BrokerApi) -> None:
    router.register(API_KEY, lambda ctx, req: handle_produce(broker, ctx, req))


def _partition_error(index: int, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "error_code": code,
        "base_offset": -1,
        "log_append_time_ms": -1,
        "log_start_offset": -1,
        "record_errors": [],
        "error_message": message,
    }


def handle_produce(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body | Any | None:
    acks = req["acks"]
    version = ctx.version
    general_error: tuple[ErrorCode, str] | None = None
    if version < MIN_SUPPORTED_VERSION:
        general_error = (
            ErrorCode.UNSUPPORTED_VERSION,
            f"Produce v{version} is not supported; use v3+",
        )
    elif acks not in (-1, 0, 1):
        general_error = (ErrorCode.INVALID_REQUIRED_ACKS, f"acks must be -1, 0 or 1, got {acks}")
    transactional_id = req.get("transactional_id")
    # A transaction version 2 producer never adds partitions itself: the leader
    # always does it for them, whatever the verification setting (Kafka's too).
    add = version >= IMPLICIT_ADD_VERSION
    if (
        general_error is None
        and transactional_id is not None
        and (add or broker.config["transaction.partition.verification.enable"])
    ):
        unverified = unverified_partitions(broker, req)
        if unverified:
            return _verify_then_produce(broker, req, transactional_id, unverified, add)
    return _produce(broker, req, general_error, {})


Waiting = list[tuple[Partition, int, dict[str, Any]]]
Recheck = list[tuple[str, int, Any, dict[str, Any]]]
"""Partitions whose batch named a schema id the registry's state here lacks:
topic, partition, records and the response entry to fill in after a refresh."""


def _produce(
    broker: BrokerApi,
    req: Body,
    general_error: tuple[ErrorCode, str] | None,
    refused: dict[tuple[str, int], ErrorCode],
    *,
    wait_for_schema_ids: bool = True,
) -> Body | Any | None:
    if (
        wait_for_schema_ids
        and general_error is None
        and not broker.schema_ids.ready
        and _checks_schema_ids(broker, req)
    ):
        return _produce_when_schema_ids_ready(broker, req, refused)
    acks = req["acks"]
    responses = []
    waiting: Waiting = []
    recheck: Recheck = []
    for topic_data in req["topic_data"]:
        name = topic_data["name"]
        partition_responses = []
        for pdata in topic_data["partition_data"]:
            index = pdata["index"]
            if general_error is not None:
                partition_responses.append(_partition_error(index, *general_error))
                continue
            code = refused.get((name, index))
            if code is not None:
                partition_responses.append(
                    _partition_error(index, code, "the partition is not in the transaction")
                    if code is ErrorCode.INVALID_TXN_STATE
                    else _partition_error(index, code)
                )
                continue
            records = pdata["records"]
            try:
                entry, partition, end = _append(broker, name, index, records, acks)
            except SchemaIdRefusal:
                entry, partition, end = _partition_error(index, ErrorCode.NONE), None, 0
                recheck.append((name, index, records, entry))
            partition_responses.append(entry)
            if partition is not None and partition.high_watermark < end:
                waiting.append((partition, end, entry))
        responses.append({"name": name, "partition_responses": partition_responses})
    body = {"responses": responses, "throttle_time_ms": 0}
    if recheck:
        return _recheck_schema_ids(broker, req, body, recheck, waiting)
    if acks == 0:
        return None
    if waiting:
        return _wait_for_replication(waiting, req["timeout_ms"], body)
    return body


def _checks_schema_ids(broker: BrokerApi, req: Body) -> bool:
    """Some partition of the request is led here and validates schema ids."""
    for topic_data in req["topic_data"]:
        for pdata in topic_data["partition_data"]:
            partition = broker.replicas.get(topic_data["name"], pdata["index"])
            if partition is not None and partition.config.validates_schema_ids:
                return True
    return False


async def _produce_when_schema_ids_ready(
    broker: BrokerApi, req: Body, refused: dict[tuple[str, int], ErrorCode]
) -> Body | None:
    """The first produce to a validated topic: this broker reads ``_schemas`` first
    (bounded by ``registry.timeout.ms``; after that the validated partitions are
    answered REQUEST_TIMED_OUT, which producers retry)."""
    await broker.schema_ids.wait_ready()
    result = _produce(broker, req, None, refused, wait_for_schema_ids=False)
    if inspect.isawaitable(result):
        result = await result
    return result


async def _recheck_schema_ids(
    broker: BrokerApi, req: Body, body: Body, recheck: Recheck, waiting: Waiting
) -> Body | None:
    """Read ``_schemas`` to its end, then append (or refuse for good) the rechecked batches."""
    acks = req["acks"]
    fresh = await broker.schema_ids.refresh()
    for name, index, records, entry in recheck:
        if fresh:
            found, partition, end = _append(broker, name, index, records, acks, final=True)
            if found["error_code"] == ErrorCode.NONE:
                log.info(
                    "produce to %s-%d: its schema ids were registered a moment ago (found after "
                    "reading %s to its end)",
                    name,
                    index,
                    broker.schema_ids.topic,
                )
        else:
            found = _partition_error(
                index,
                ErrorCode.REQUEST_TIMED_OUT,
                f"reading the schema registry's {broker.schema_ids.topic} took too long",
            )
            partition, end = None, 0
        entry.clear()
        entry.update(found)
        if partition is not None and partition.high_watermark < end:
            waiting.append((partition, end, entry))
    if acks == 0:
        return None
    if waiting:
        return await _wait_for_replication(waiting, req["timeout_ms"], body)
    return body


def unverified_partitions(broker: BrokerApi, req: Body) -> dict[tuple[int, int], list[Any]]:
    """(producer id, epoch) -> partitions whose first batch would open a transaction of
    that producer here: they need the coordinator's word first (KIP-890)."""
    out: dict[tuple[int, int], list[Any]] = {}
    for topic_data in req["topic_data"]:
        for pdata in topic_data["partition_data"]:
            records = pdata["records"]
            if records is None or len(records) < BATCH_HEADER_SIZE:
                continue
            header = read_batch_header(records, 0)
            if not header.is_transactional or header.producer_id < 0:
                continue
            partition = broker.replicas.get(topic_data["name"], pdata["index"])
            if partition is None or header.producer_id in (
                partition.producer_state.ongoing_transactions()
            ):
                continue
            key = (header.producer_id, header.producer_epoch)
            out.setdefault(key, []).append((topic_data["name"], pdata["index"]))
    return out


async def _verify_then_produce(
    broker: BrokerApi,
    req: Body,
    transactional_id: str,
    unverified: dict[tuple[int, int], list[Any]],
    add: bool,
) -> Body | None:
    refused: dict[tuple[str, int], ErrorCode] = {}
    for (producer_id, epoch), tps in unverified.items():
        codes = await verify_partitions(broker, transactional_id, producer_id, epoch, tps, add)
        refused.update({tp: code for tp, code in codes.items() if code is not ErrorCode.NONE})
    if refused:
        log.info("produce of %r refused after verification: %s", transactional_id, refused)
    result = _produce(broker, req, None, refused)
    if inspect.isawaitable(result):
        result = await result
    return result


async def _wait_for_replication(
    waiting: list[tuple[Partition, int, dict[str, Any]]], timeout_ms: int, body: Body
) -> Body:
    """acks=all: answer once every written partition's ISR has the records (Kafka's
    DelayedProduce), or with the error that stopped one of them."""
    outcomes = await asyncio.gather(
        *(partition.wait_for_acks(end, timeout_ms) for partition, end, _ in waiting)
    )
    for (_, _, entry), code in zip(waiting, outcomes, strict=True):
        if code != ErrorCode.NONE:
            entry["error_code"] = code
            entry["error_message"] = ErrorCode(code).name
    return body


def _append(
    broker: BrokerApi, topic: str, index: int, records: Any, acks: int, *, final: bool = False
) -> tuple[dict[str, Any], Partition | None, int]:
    """The partition's response entry; with acks=all also the partition and the
    offset its high watermark must reach before the answer goes out.  Raises
    SchemaIdRefusal for a batch that named an id the registry's state here
    lacks, unless ``final`` (the state has just been read to its end)."""
    if topic in INTERNAL_TOPICS:
        return (
            _partition_error(
                index,
                ErrorCode.INVALID_TOPIC_EXCEPTION,
                f"clients cannot write to internal topic {topic}",
            ),
            None,
            0,
        )
    try:
        partition = broker.replicas.leader_partition(topic, index)
    except KafkaError as exc:
        return _partition_error(index, exc.code, str(exc)), None, 0
    if records is None or len(records) == 0:
        return (
            _partition_error(index, ErrorCode.CORRUPT_MESSAGE, "no records in the request"),
            None,
            0,
        )
    try:
        schema_ids = broker.schema_ids.check() if partition.config.validates_schema_ids else None
        result = partition.append_from_client(records, required_acks=acks, schema_ids=schema_ids)
    except SchemaIdRefusal as exc:
        if exc.unregistered and not final:
            raise
        log.info("produce to %s-%d refused: %s", topic, index, exc)
        return _refused_records(index, exc), None, 0
    except InvalidRecordError as exc:
        log.info("produce to %s-%d refused: %s", topic, index, exc)
        return _refused_records(index, exc), None, 0
    except KafkaError as exc:
        log.info("produce to %s-%d refused: %s", topic, index, exc)
        return _partition_error(index, exc.code, str(exc)), None, 0
    metrics = broker.metrics
    if metrics is not None and not result.duplicate:
        metrics.on_produced(topic, len(records), result.last_offset - result.base_offset + 1)
    entry = {
        "index": index,
        "error_code": 0,
        "base_offset": result.base_offset,
        "log_append_time_ms": result.log_append_time_ms,
        "log_start_offset": result.log_start_offset,
        "record_errors": [],
        "error_message": None,
    }
    return entry, (partition if acks == -1 else None), result.last_offset + 1


def _refused_records(index: int, exc: InvalidRecordError) -> dict[str, Any]:
    """INVALID_RECORD (INVALID_TIMESTAMP) with a RecordError per record, and Kafka's
    summary message."""
    refused = _partition_error(index, exc.code, exc.summary)
    refused["record_errors"] = [
        {"batch_index": at, "batch_index_error_message": why} for at, why in exc.record_errors
    ]
    return refused
