"""Produce (key 0): validate batch headers and append them.

Records are not decoded, except on compacted topics, where every record must
have a key (INVALID_RECORD otherwise, as Kafka answers).

Versions 0-2 are advertised (librdkafka <= 2.11 only compresses when the broker
lists Produce v0) but refused with UNSUPPORTED_VERSION, as Kafka 4 does.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, InvalidRecordError, KafkaError
from samsa.server.router import Body, RequestContext, Router
from samsa.server.handlers.cluster import INTERNAL_TOPICS

if TYPE_CHECKING:
    from samsa.server.broker import Broker

log = logging.getLogger("samsa.server")

API_KEY = 0
MIN_SUPPORTED_VERSION = 3


def register(router: Router, broker: Broker) -> None:
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


def _not_here(broker: Broker, topic: str, index: int) -> dict[str, Any]:
    image_topic = broker.image.topics.get(topic)
    if image_topic is not None and index in image_topic.partitions:
        return _partition_error(
            index,
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            f"broker {broker.node_id} is not the leader of {topic}-{index}",
        )
    return _partition_error(
        index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{topic}-{index} does not exist"
    )


def handle_produce(broker: Broker, ctx: RequestContext, req: Body) -> Body | None:
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
    elif req.get("transactional_id") is not None:
        general_error = (
            ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            "transactions are not supported by this broker yet",
        )
    responses = []
    for topic_data in req["topic_data"]:
        name = topic_data["name"]
        partition_responses = []
        for pdata in topic_data["partition_data"]:
            index = pdata["index"]
            if general_error is not None:
                partition_responses.append(_partition_error(index, *general_error))
                continue
            partition_responses.append(_append(broker, name, index, pdata["records"], acks))
        responses.append({"name": name, "partition_responses": partition_responses})
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time_ms": 0}


def _append(broker: Broker, topic: str, index: int, records: Any, acks: int) -> dict[str, Any]:
    if topic in INTERNAL_TOPICS:
        return _partition_error(
            index,
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"clients cannot write to internal topic {topic}",
        )
    partition = broker.replicas.get(topic, index)
    if partition is None or not broker.leads(topic, index):
        return _not_here(broker, topic, index)
    if records is None or len(records) == 0:
        return _partition_error(index, ErrorCode.CORRUPT_MESSAGE, "no records in the request")
    if acks == -1 and partition.config.min_insync_replicas > 1:
        return _partition_error(
            index,
            ErrorCode.NOT_ENOUGH_REPLICAS,
            f"min.insync.replicas={partition.config.min_insync_replicas} but the ISR has 1 replica",
        )
    try:
        result = partition.append_from_client(records)
    except InvalidRecordError as exc:
        log.info("produce to %s-%d refused: %s", topic, index, exc)
        refused = _partition_error(index, exc.code, exc.reason)
        refused["record_errors"] = [
            {"batch_index": exc.batch_index, "batch_index_error_message": exc.reason}
        ]
        return refused
    except KafkaError as exc:
        log.info("produce to %s-%d refused: %s", topic, index, exc)
        return _partition_error(index, exc.code, str(exc))
    metrics = broker.metrics
    if metrics is not None and not result.duplicate:
        metrics.on_produced(topic, len(records), result.last_offset - result.base_offset + 1)
    return {
        "index": index,
        "error_code": 0,
        "base_offset": result.base_offset,
        "log_append_time_ms": result.log_append_time_ms,
        "log_start_offset": result.log_start_offset,
        "record_errors": [],
        "error_message": None,
    }
