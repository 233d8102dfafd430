"""Producer id blocks: AllocateProducerIds.

Kafka's ``ProducerIdControlManager``.  A broker takes a block of 1000 ids at a
time; the ProducerIdsRecord moves the cluster's next id past the block before
the broker hears of it, so an id is never handed out twice, across controller
failovers and restarts alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.controller.controller_config import PRODUCER_ID_BLOCK_SIZE
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import make_record

LONG_MAX = 2**63 - 1


def allocate_producer_ids(image: MetadataImage, request: Mapping[str, Any]) -> ControllerResult:
    """The next block for the requesting broker, if its broker epoch is current."""
    broker_id, broker_epoch = request["broker_id"], request["broker_epoch"]
    broker = image.brokers.get(broker_id)
    if broker is None or broker.epoch != broker_epoch:
        return ControllerResult([], _response(ErrorCode.STALE_BROKER_EPOCH))
    start = image.next_producer_id
    if start > LONG_MAX - PRODUCER_ID_BLOCK_SIZE:
        return ControllerResult([], _response(ErrorCode.UNKNOWN_SERVER_ERROR))
    record = make_record(
        "ProducerIdsRecord",
        broker_id=broker_id,
        broker_epoch=broker_epoch,
        next_producer_id=start + PRODUCER_ID_BLOCK_SIZE,
    )
    return ControllerResult([record], _response(ErrorCode.NONE, start))


def _response(code: ErrorCode, start: int = -1) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": int(code),
        "producer_id_start": start,
        "producer_id_len": PRODUCER_ID_BLOCK_SIZE if code == ErrorCode.NONE else 0,
    }
