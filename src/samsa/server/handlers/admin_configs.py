"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44),
ListConfigResources (74).

Describing reads this broker's view: topic overrides from the metadata image
over the broker's current topic defaults, and the broker's own layered
settings (``DynamicBrokerConfig``); the rows are built as Kafka's ConfigHelper
builds them (``config_describe``).  A broker resource names this broker or
``""`` (the cluster-wide default); any other id is INVALID_REQUEST, as in Kafka,
since clients send broker resources to the broker itself.

Changes are the controller's and are forwarded to it, except what Kafka's
``ConfigAdminManager.preprocess`` answers on the broker: broker resources
naming another broker are refused (the controller cannot tell which broker was
asked), and log levels (BROKER_LOGGER, ``broker_loggers``) are this process's
own and change here.

ListConfigResources names the resources one may describe, by type: v0 (then
ListClientMetricsResources) client metrics subscriptions only, v1 (KIP-1142)
topics, brokers and their loggers, client metrics and groups (those with
configs set).  Samsa keeps no client metrics subscriptions, so that list is empty; a
type outside the version's set is answered UNSUPPORTED_VERSION, as in Kafka.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.controller.partitions.topic_validation import validate_topic_name
from samsa.errors import ErrorCode, KafkaError
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.metadata.config_describe import broker_rows, group_rows, topic_rows
from samsa.server.observability import broker_loggers

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
INCREMENTAL_ALTER_CONFIGS = 44
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
RESOURCE_BROKER_LOGGER = 8
RESOURCE_CLIENT_METRICS = 16
RESOURCE_GROUP = 32
LIST_CONFIG_RESOURCES = 74


def register(router: Router, broker: BrokerApi, listener: str) -> None:
    router.register(DESCRIBE_CONFIGS, lambda ctx, req: handle_describe_configs(broker, ctx, req))
    router.register(
        LIST_CONFIG_RESOURCES, lambda ctx, req: list_config_resources(broker, listener, ctx, req)
    )
    for api_key in (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS):
        router.register(
            api_key,
            lambda ctx, req, key=api_key: handle_alter(broker, key, ctx, req),  # type: ignore[misc]
        )


def list_config_resources(broker: BrokerApi, listener: str, ctx: RequestContext, req: Body) -> Body:
    supported = (
        {RESOURCE_CLIENT_METRICS}
        if ctx.version == 0
        else {
            RESOURCE_TOPIC,
            RESOURCE_BROKER,
            RESOURCE_BROKER_LOGGER,
            RESOURCE_CLIENT_METRICS,
            RESOURCE_GROUP,
        }
    )
    wanted = set(req.get("resource_types") or ()) or supported
    answer: Body = {"throttle_time_ms": 0, "error_code": 0, "config_resources": []}
    if not wanted <= supported:
        answer["error_code"] = ErrorCode.UNSUPPORTED_VERSION
        return answer
    # Kafka's order: groups, client metrics, broker loggers, brokers, topics.
    brokers = [
        str(b.id)
        for b in sorted(broker.image.brokers.values(), key=lambda b: b.id)
        if not b.fenced and b.listener(listener) is not None
    ]
    groups = sorted(name for rtype, name in broker.image.configs if rtype == RESOURCE_GROUP)
    if RESOURCE_GROUP in wanted:
        answer["config_resources"] += [
            {"resource_name": name, "resource_type": RESOURCE_GROUP} for name in groups
        ]
    for kind, names in (
        (RESOURCE_BROKER_LOGGER, brokers),
        (RESOURCE_BROKER, brokers),
        (RESOURCE_TOPIC, sorted(broker.image.topics)),
    ):
        if kind in wanted:
            answer["config_resources"] += [
                {"resource_name": name, "resource_type": kind} for name in names
            ]
    return answer


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
    if rtype == RESOURCE_GROUP:
        if not rname:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
        return group_rows(broker.dynamic_config, broker.image.group_configs(rname), keys, **options)
    if rtype == RESOURCE_BROKER_LOGGER:
        if not rname:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
        _this_broker(broker, rname, or_default=False)
        return broker_loggers.describe(keys)
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


_FORWARD = KafkaError(ErrorCode.NONE, "forward to the controller")


def _preprocess(broker: BrokerApi, api_key: int, resource: Body, validate_only: bool) -> KafkaError:
    """Kafka's ConfigAdminManager.preprocess: what this broker answers itself
    (an error, or NONE for log levels it applied), or ``_FORWARD``."""
    rtype, rname = resource["resource_type"], resource["resource_name"]
    try:
        if rtype == RESOURCE_BROKER_LOGGER:
            if api_key != INCREMENTAL_ALTER_CONFIGS:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {rtype}")
            _this_broker(broker, rname, or_default=False)
            broker_loggers.alter(resource["configs"], validate_only=validate_only)
            return KafkaError(ErrorCode.NONE, "")
        if rtype == RESOURCE_BROKER and rname:
            _this_broker(broker, rname, or_default=False)
    except KafkaError as exc:
        return exc
    return _FORWARD


async def handle_alter(broker: BrokerApi, api_key: int, ctx: RequestContext, req: Body) -> Body:
    validate_only = bool(req.get("validate_only", False))
    answered = {id(r): _preprocess(broker, api_key, r, validate_only) for r in req["resources"]}
    refused = {key: error for key, error in answered.items() if error is not _FORWARD}
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
                    "error_message": str(error) if error.code else None,
                    "resource_type": key[0],
                    "resource_name": key[1],
                }
            )
        else:
            responses.append(answers[key])
    return {"throttle_time_ms": 0, "responses": responses}
