"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44).

Describing reads this broker's view: topic overrides from the metadata image
over the broker's current topic defaults, and the broker's own layered
settings (``DynamicBrokerConfig``); the rows are built as Kafka's ConfigHelper
builds them (``config_describe``).  A broker resource names this broker or
``""`` (the cluster-wide default); any other id is INVALID_REQUEST, as in Kafka,
since clients send broker resources to the broker itself.

Changes are the controller's and are forwarded to it, except that broker
resources naming another broker are refused here first (Kafka's
``ConfigAdminManager.preprocess``): the controller cannot tell which broker
was asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.controller.topic_validation import validate_topic_name
from samsa.errors import ErrorCode, KafkaError
from samsa.server.config_describe import broker_rows, topic_rows
from samsa.server.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
INCREMENTAL_ALTER_CONFIGS = 44
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4


def register(router: Router, broker: BrokerApi) -> None:
    router.register(DESCRIBE_CONFIGS, lambda ctx, req: handle_describe_configs(broker, ctx, req))
    for api_key in (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS):
        router.register(
            api_key,
            lambda ctx, req, key=api_key: handle_alter(broker, key, ctx, req),  # type: ignore[misc]
        )


def _this_broker(broker: BrokerApi, name: str, *, or_default: bool) -> None:
    """Kafka's check that a broker resource names the broker that was asked."""
    try:
        broker_id = int(name)
    except ValueError:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}"
        ) from None
    if broker_id != broker.node_id:
        also = " or empty string" if or_default else ""
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {broker.node_id}{also}, but received {name}",
        )


def _describe_one(broker: BrokerApi, res: Body, req: Body) -> list[dict[str, Any]]:
    rtype, rname = res["resource_type"], res["resource_name"]
    options = {
        "include_synonyms": bool(req.get("include_synonyms", False)),
        "include_documentation": bool(req.get("include_documentation", False)),
    }
    keys = res["configuration_keys"]
    if rtype == RESOURCE_TOPIC:
        validate_topic_name(rname)
        if rname not in broker.image.topics:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {rname!r} does not exist"
            )
        overrides = broker.image.topic_configs(rname)
        return topic_rows(broker.dynamic_config, overrides, keys, **options)
    if rtype == RESOURCE_BROKER:
        if rname:
            _this_broker(broker, rname, or_default=True)
        return broker_rows(broker.dynamic_config, keys, per_broker=bool(rname), **options)
    raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {rtype}")


def handle_describe_configs(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    results = []
    for res in req["resources"]:
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": res["resource_type"],
            "resource_name": res["resource_name"],
            "configs": [],
        }
        try:
            result["configs"] = _describe_one(broker, res, req)
        except KafkaError as exc:
            result["error_code"] = exc.code
            result["error_message"] = str(exc)
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}


def _preprocess(broker: BrokerApi, resource: Body) -> KafkaError | None:
    """The error this broker answers itself for a resource, or None to forward it."""
    if resource["resource_type"] != RESOURCE_BROKER or not resource["resource_name"]:
        return None
    try:
        _this_broker(broker, resource["resource_name"], or_default=False)
    except KafkaError as exc:
        return exc
    return None


async def handle_alter(broker: BrokerApi, api_key: int, ctx: RequestContext, req: Body) -> Body:
    refused = {id(r): e for r in req["resources"] if (e := _preprocess(broker, r)) is not None}
    forwarded = [r for r in req["resources"] if id(r) not in refused]
    answers: dict[tuple[int, str], dict[str, Any]] = {}
    if forwarded:
        try:
            response = await broker.forward(api_key, ctx.version, {**req, "resources": forwarded})
            for answer in response["responses"]:
                answers[(answer["resource_type"], answer["resource_name"])] = answer
        except KafkaError as exc:
            for r in forwarded:
                refused[id(r)] = exc
    responses = []
    for r in req["resources"]:
        key = (r["resource_type"], r["resource_name"])
        error = refused.get(id(r))
        if error is not None or key not in answers:
            error = error or KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "no answer for it")
            responses.append(
                {
                    "error_code": error.code,
                    "error_message": str(error),
                    "resource_type": key[0],
                    "resource_name": key[1],
                }
            )
        else:
            responses.append(answers[key])
    return {"throttle_time_ms": 0, "responses": responses}
