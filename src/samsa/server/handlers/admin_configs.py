"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44).

Topic overrides live in the metadata image (ConfigRecords); describing a topic
lists every topic config with its effective value and whether it is an
override (source TOPIC_CONFIG) or the broker default (DEFAULT_CONFIG /
STATIC_BROKER).  Changes are the controller's: they are forwarded to it.
BrokerApi configs are read-only here: they come from server.properties and flags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
INCREMENTAL_ALTER_CONFIGS = 44
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
SOURCE_TOPIC_CONFIG = 1
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5


def register(router: Router, broker: BrokerApi) -> None:
    router.register(DESCRIBE_CONFIGS, lambda ctx, req: handle_describe_configs(broker, ctx, req))
    for api_key in (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS):
        router.register(
            api_key,
            lambda ctx, req, key=api_key: forward(broker, key, ctx, req),  # type: ignore[misc]
        )


def _entry(
    name: str, value: str | None, source: int, read_only: bool, synonyms: bool
) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "config_source": source,
        "is_sensitive": False,
        "synonyms": [{"name": name, "value": value, "source": source}] if synonyms else [],
        "config_type": 0,
        "documentation": None,
    }


def handle_describe_configs(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    results = []
    synonyms = req.get("include_synonyms", False)
    for res in req["resources"]:
        rtype, rname = res["resource_type"], res["resource_name"]
        keys = res["configuration_keys"]
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": rtype,
            "resource_name": rname,
            "configs": [],
        }
        if rtype == RESOURCE_TOPIC:
            if rname not in broker.image.topics:
                result["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                result["error_message"] = f"topic {rname!r} does not exist"
            else:
                overrides = broker.image.topic_configs(rname)
                effective = broker.topic_config(rname)
                for name, value in sorted(effective.items()):
                    if keys is not None and name not in keys:
                        continue
                    source = SOURCE_TOPIC_CONFIG if name in overrides else SOURCE_DEFAULT
                    result["configs"].append(_entry(name, value, source, False, synonyms))
        elif rtype == RESOURCE_BROKER:
            if rname not in ("", str(broker.node_id)):
                result["error_code"] = ErrorCode.INVALID_REQUEST
                result["error_message"] = f"this broker is node {broker.node_id}, not {rname!r}"
            else:
                for name, value in sorted(broker.config.items()):
                    if keys is not None and name not in keys:
                        continue
                    source = (
                        SOURCE_STATIC_BROKER if broker.config.is_explicit(name) else SOURCE_DEFAULT
                    )
                    result["configs"].append(_entry(name, str(value), source, True, synonyms))
        else:
            result["error_code"] = ErrorCode.INVALID_REQUEST
            result["error_message"] = f"resource type {rtype} is not supported"
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}


async def forward(broker: BrokerApi, api_key: int, ctx: RequestContext, req: Body) -> Body:
    try:
        return await broker.forward(api_key, ctx.version, req)
    except KafkaError as exc:
        responses = [
            {
                "error_code": exc.code,
                "error_message": str(exc),
                "resource_type": r["resource_type"],
                "resource_name": r["resource_name"],
            }
            for r in req["resources"]
        ]
        return {"throttle_time_ms": 0, "responses": responses}
