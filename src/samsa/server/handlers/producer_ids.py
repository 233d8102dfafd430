"""InitProducerId (22): idempotent producers here, transactional ones via the coordinator.

Each call hands out a fresh producer id that is never reused, even across
restarts or brokers (blocks of ids come from the controller through the
metadata log).  v3+ callers that pass
their current id and epoch get the same id with the epoch bumped, which is how
an idempotent producer recovers from an unknown sequence without losing order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.errors import ErrorCode, KafkaError
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.handlers.transactions import init_transactional_producer_id

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

API_KEY = 22
MAX_EPOCH = 32767


def register(router: Router, broker: BrokerApi) -> None:
    router.register(API_KEY, lambda ctx, req: handle_init_producer_id(broker, ctx, req))


def _error(code: int) -> Body:
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}


async def handle_init_producer_id(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    if req.get("transactional_id") is not None:
        return await init_transactional_producer_id(broker, req)
    current_id = req.get("producer_id", -1)
    current_epoch = req.get("producer_epoch", -1)
    if current_id >= 0 and current_epoch >= 0 and current_epoch < MAX_EPOCH - 1:
        if current_id >= broker.image.next_producer_id:
            return {
                "throttle_time_ms": 0,
                "error_code": ErrorCode.INVALID_PRODUCER_ID_MAPPING,
                "producer_id": -1,
                "producer_epoch": -1,
            }
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "producer_id": current_id,
            "producer_epoch": current_epoch + 1,
        }
    try:
        producer_id = await broker.producer_ids.allocate()
    except KafkaError as exc:
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE if exc.retriable else exc.code)
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id, "producer_epoch": 0}
