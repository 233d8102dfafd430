"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44).

Topic overrides are persisted in the metadata log; describing a topic lists
every topic config with its effective value and whether it is an override
(source TOPIC_CONFIG) or the broker default (DEFAULT_CONFIG / STATIC_BROKER).
Broker configs are read-only here: they come from server.properties and flags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker import Broker

DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
INCREMENTAL_ALTER_CONFIGS = 44
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
SOURCE_TOPIC_CONFIG = 1
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5
OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3


def register(router: Router, broker: Broker) -> None:
    router.register(DESCRIBE_CONFIGS, lambda ctx, req: handle_describe_configs(broker, ctx, req))
    router.register(ALTER_CONFIGS, lambda ctx, req: handle_alter_configs(broker, ctx, req))
    router.register(
        INCREMENTAL_ALTER_CONFIGS, lambda ctx, req: handle_incremental_alter(broker, ctx, req)
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


def handle_describe_configs(broker: Broker, ctx: RequestContext, req: Body) -> Body:
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
            topic = broker.image.topics.get(rname)
            if topic is None:
                result["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                result["error_message"] = f"topic {rname!r} does not exist"
            else:
                effective = broker.topics.effective_config(topic.configs)
                for name, value in sorted(effective.items()):
                    if keys is not None and name not in keys:
                        continue
                    source = SOURCE_TOPIC_CONFIG if name in topic.configs else SOURCE_DEFAULT
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


def _alter_response(rtype: int, rname: str, exc: KafkaError | None) -> dict[str, Any]:
    return {
        "error_code": exc.code if exc else 0,
        "error_message": str(exc) if exc else None,
        "resource_type": rtype,
        "resource_name": rname,
    }


def _check_resource(broker: Broker, rtype: int, rname: str) -> None:
    if rtype == RESOURCE_BROKER:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, "broker configs cannot be altered at runtime yet"
        )
    if rtype != RESOURCE_TOPIC:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"resource type {rtype} is not supported")
    if rname not in broker.image.topics:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {rname!r} does not exist")


def handle_alter_configs(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    responses = []
    for res in req["resources"]:
        rtype, rname = res["resource_type"], res["resource_name"]
        try:
            _check_resource(broker, rtype, rname)
            configs = {c["name"]: c["value"] for c in res["configs"] if c["value"] is not None}
            broker.topics.set_topic_configs(
                rname, configs, validate_only=req.get("validate_only", False)
            )
            responses.append(_alter_response(rtype, rname, None))
        except KafkaError as exc:
            responses.append(_alter_response(rtype, rname, exc))
    return {"throttle_time_ms": 0, "responses": responses}


def handle_incremental_alter(broker: Broker, ctx: RequestContext, req: Body) -> Body:
    responses = []
    for res in req["resources"]:
        rtype, rname = res["resource_type"], res["resource_name"]
        try:
            _check_resource(broker, rtype, rname)
            current = dict(broker.image.topics[rname].configs)
            for op in res["configs"]:
                _apply(current, broker.topics.effective_config(current), op)
            broker.topics.set_topic_configs(
                rname, current, validate_only=req.get("validate_only", False)
            )
            responses.append(_alter_response(rtype, rname, None))
        except KafkaError as exc:
            responses.append(_alter_response(rtype, rname, exc))
    return {"throttle_time_ms": 0, "responses": responses}


def _apply(current: dict[str, str], effective: dict[str, str], op: dict[str, Any]) -> None:
    name, value, kind = op["name"], op["value"], op["config_operation"]
    if kind == OP_SET:
        if value is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"SET of {name} needs a value")
        current[name] = value
    elif kind == OP_DELETE:
        current.pop(name, None)
    elif kind in (OP_APPEND, OP_SUBTRACT):
        items = [v for v in effective.get(name, "").split(",") if v]
        given = [v for v in (value or "").split(",") if v]
        if kind == OP_APPEND:
            items += [v for v in given if v not in items]
        else:
            items = [v for v in items if v not in given]
        current[name] = ",".join(items)
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"unknown config operation {kind}")
