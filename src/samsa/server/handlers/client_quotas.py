"""DescribeClientQuotas (48) and AlterClientQuotas (49).

Describing reads this broker's metadata image, as Kafka's brokers answer from
their ``ClientQuotasImage``: the filter's components each match an entity
type by exact name (0), default (1) or any name (2); ``strict`` also leaves
out entities that have types the filter does not name.  A bad filter fails the
whole request with Kafka's error and wording.  Changes are the
controller's (``client_quota_control``) and are forwarded to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.metadata.quotas import CLIENT_ID, ENTITY_TYPES, IP, USER, Entity
from samsa.server.connections.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE_CLIENT_QUOTAS = 48
ALTER_CLIENT_QUOTAS = 49
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


def register(router: Router, broker: BrokerApi) -> None:
    router.register(DESCRIBE_CLIENT_QUOTAS, lambda ctx, req: handle_describe(broker, ctx, req))
    router.register(ALTER_CLIENT_QUOTAS, lambda ctx, req: handle_alter(broker, ctx, req))


Filter = dict[str, tuple[int, str | None]]


class FilterError(ValueError):
    """A filter Kafka's ``ClientQuotasImage.describe`` refuses; its words, its code."""

    def __init__(self, message: str, code: ErrorCode = ErrorCode.INVALID_REQUEST) -> None:
        super().__init__(message)
        self.code = code


def _filter(components: list[Body]) -> Filter:
    wanted: Filter = {}
    for component in components:
        entity_type, match_type, match = (
            component["entity_type"],
            component["match_type"],
            component["match"],
        )
        if not entity_type:
            raise FilterError("Invalid empty entity type.")
        if entity_type in wanted:
            raise FilterError(
                f"Entity type {entity_type} cannot appear more than once in the filter."
            )
        if entity_type not in ENTITY_TYPES:
            raise FilterError(
                f"Unsupported entity type {entity_type}", ErrorCode.UNSUPPORTED_VERSION
            )
        if match_type == MATCH_EXACT and match is None:
            raise FilterError("Request specified MATCH_TYPE_EXACT, but set match string to null.")
        if match_type in (MATCH_DEFAULT, MATCH_SPECIFIED) and match is not None:
            name = "MATCH_TYPE_DEFAULT" if match_type == MATCH_DEFAULT else "MATCH_TYPE_SPECIFIED"
            raise FilterError(f"Request specified {name}, but also specified a match string.")
        if match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
            raise FilterError(f"Unknown match type {match_type}")
        wanted[entity_type] = (match_type, match)
    if IP in wanted and (USER in wanted or CLIENT_ID in wanted):
        raise FilterError(
            "Invalid entity filter component combination. IP filter component should not "
            "be used with user or clientId filter component."
        )
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
    except FilterError as exc:
        return {
            "throttle_time_ms": 0,
            "error_code": exc.code,
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
