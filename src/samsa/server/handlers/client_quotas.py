"""DescribeClientQuotas (48) and AlterClientQuotas (49).

Describing reads this broker's metadata image, as Kafka's brokers answer from
their ``ClientQuotasImage``: the filter's components each match an entity
type by exact name (0), default (1) or any name (2); ``strict`` also leaves
out entities that have types the filter does not name.  A bad filter is
INVALID_REQUEST for the whole request, with Kafka's wording.  Changes are the
controller's (``client_quota_control``) and are forwarded to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.controller.client_quota_control import InvalidQuota
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.metadata.quotas import ENTITY_TYPES, Entity
from samsa.server.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE_CLIENT_QUOTAS = 48
ALTER_CLIENT_QUOTAS = 49
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


def register(router: Router, broker: BrokerApi) -> None:
    router.register(DESCRIBE_CLIENT_QUOTAS, lambda ctx, req: handle_describe(broker, ctx, req))
    router.register(ALTER_CLIENT_QUOTAS, lambda ctx, req: handle_alter(broker, ctx, req))


Filter = dict[str, tuple[int, str | None]]


def _filter(components: list[Body]) -> Filter:
    wanted: Filter = {}
    for component in components:
        entity_type, match_type, match = (
            component["entity_type"],
            component["match_type"],
            component["match"],
        )
        if entity_type in wanted:
            raise InvalidQuota(f"Duplicate {entity_type} filter component entity type")
        if entity_type not in ENTITY_TYPES:
            raise InvalidQuota(f"Unknown entity type: {entity_type}")
        if match_type == MATCH_EXACT and match is None:
            raise InvalidQuota("Exact match needs a name to match")
        if match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
            raise InvalidQuota(f"Unknown match type: {match_type}")
        wanted[entity_type] = (match_type, match)
    return wanted


def _matches(entity: Entity, wanted: Filter, strict: bool) -> bool:
    names = dict(entity)
    if strict and set(names) != set(wanted):
        return False
    for entity_type, (match_type, match) in wanted.items():
        if entity_type not in names:
            return False
        name = names[entity_type]
        if match_type == MATCH_EXACT and name != match:
            return False
        if match_type == MATCH_DEFAULT and name is not None:
            return False
    return True


def handle_describe(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    try:
        wanted = _filter(req["components"])
    except InvalidQuota as exc:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.INVALID_REQUEST,
            "error_message": str(exc),
            "entries": None,
        }
    strict = bool(req.get("strict"))
    entries: list[dict[str, Any]] = [
        {
            "entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
            "values": [{"key": k, "value": v} for k, v in sorted(values.items())],
        }
        for entity, values in broker.image.client_quotas.items()
        if _matches(entity, wanted, strict)
    ]
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "entries": entries}


async def handle_alter(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    try:
        return await broker.forward(ALTER_CLIENT_QUOTAS, ctx.version, req)
    except KafkaError as exc:
        return {
            "throttle_time_ms": 0,
            "entries": [
                {"error_code": exc.code, "error_message": str(exc), "entity": entry["entity"]}
                for entry in req["entries"]
            ],
        }
