"""Configs of a topic or of this broker, as the DescribeConfigs handler answers
them, with what a person reads them by.

Each row keeps its raw ``value`` and Kafka's ``source``, and adds
``override`` (set somewhere, not Kafka's default) and ``human``: the value in
units beside the number (``604800000`` on a ``.ms`` key is "7 d",
``1073741824`` on a ``.bytes`` key "1 GiB", Long.MAX_VALUE "unlimited", -1
retention "unlimited").  Secrets are never shown.  A broker resource names
this broker only: each broker describes its own settings, as in Kafka.
"""

from __future__ import annotations

from typing import Any

from samsa.console.context import CLUSTER, CLUSTER_NAME, TOPIC, ConsoleContext
from samsa.console.values import masked
from samsa.http.messages import HttpError, Request, Response, json_response
from samsa.protocol.acl import AclOperation
from samsa.protocol.config_sources import config_source_name

DESCRIBE_CONFIGS = 32
RESOURCE_TOPIC, RESOURCE_BROKER = 2, 4
DEFAULT_SOURCE = "DEFAULT_CONFIG"
LONG_MAX, INT_MAX = 2**63 - 1, 2**31 - 1
DURATIONS = ((86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1000, "s"), (1, "ms"))
SIZES = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1, "B"))
MS_PER = {".ms": 1, ".seconds": 1000, ".minutes": 60_000, ".hours": 3_600_000}


def _scaled(amount: int, units: tuple[tuple[int, str], ...]) -> str:
    for size, unit in units:
        if amount >= size:
            whole, rest = divmod(amount, size)
            return f"{whole} {unit}" if not rest else f"{amount / size:.1f} {unit}"
    return f"0 {units[-1][1]}"


def human_value(name: str, value: str | None) -> str | None:
    """The value in units a person reads (None where the number says it all)."""
    if value is None or not value.lstrip("-").isdigit():
        return None
    number = int(value)
    if number in (LONG_MAX, INT_MAX):
        return "unlimited"
    suffix = next((s for s in (*MS_PER, ".bytes") if name.endswith(s)), None)
    if suffix is None:
        return None
    if number < 0:
        if "retention" in name and number == -1:
            return "unlimited"
        if name.startswith("local.retention") and number == -2:
            return f"as {name.removeprefix('local.')}"
        return None
    if suffix == ".bytes":
        return _scaled(number, SIZES)
    return _scaled(number * MS_PER[suffix], DURATIONS)


def config_rows(ctx: ConsoleContext, resource_type: int, name: str) -> list[dict[str, Any]]:
    """Every config of one resource, through the DescribeConfigs handler."""
    request = {
        "resources": [
            {"resource_type": resource_type, "resource_name": name, "configuration_keys": None}
        ],
        "include_synonyms": False,
        "include_documentation": False,
    }
    resource = ctx.kafka_now(DESCRIBE_CONFIGS, 4, request)["results"][0]
    if resource["error_code"]:
        raise HttpError(404, resource["error_message"] or f"{name!r} has no configs here")
    rows = []
    for c in sorted(resource["configs"], key=lambda c: c["name"]):
        secret = c["is_sensitive"] or masked(c["name"], c["value"]) != c["value"]
        source = config_source_name(c["config_source"])
        rows.append(
            {
                "name": c["name"],
                "value": "******" if secret else c["value"],
                "source": source,
                "read_only": c["read_only"],
                "override": source != DEFAULT_SOURCE,
                "human": None if secret else human_value(c["name"], c["value"]),
            }
        )
    return rows


def topic_configs(ctx: ConsoleContext, name: str) -> list[dict[str, Any]]:
    """Every config of the topic (for a caller without DESCRIBE_CONFIGS on it,
    none: the page shows the rest)."""
    if not ctx.may(AclOperation.DESCRIBE_CONFIGS, TOPIC, name):
        return []
    return config_rows(ctx, RESOURCE_TOPIC, name)


def broker_configs(ctx: ConsoleContext, node: str, _: Request) -> Response:
    """``GET /api/brokers/ID/configs``: DescribeConfigs of a BROKER resource,
    which needs DESCRIBE_CONFIGS on the cluster."""
    ctx.require(AclOperation.DESCRIBE_CONFIGS, CLUSTER, CLUSTER_NAME)
    here = ctx.broker.node_id
    if node != str(here):
        known = any(str(b) == node for b in ctx.broker.image.brokers)
        raise HttpError(
            404,
            f"broker {node}'s configs are on its own console (each broker describes its own "
            f"settings; this is broker {here})"
            if known
            else f"broker {node!r} does not exist",
        )
    return json_response({"node_id": here, "configs": config_rows(ctx, RESOURCE_BROKER, node)})
