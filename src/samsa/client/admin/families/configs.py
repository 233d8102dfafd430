"""Configs through Admin: DescribeConfigs (32) and IncrementalAlterConfigs (44).

One resource (a topic, a broker, a group) is described with every entry's
source and flags, or changed key by key; the configs of many topics come in
one request (``describe_topic_configs``): a cluster-wide view (under-min-ISR
partitions need every topic's ``min.insync.replicas``) would otherwise cost
one round trip per topic; Kafka's tools batch the resources the same way.
Configs are the same on every broker, so any broker answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samsa.client.admin.item_errors import check_item, item_error
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.admin.results import ConfigEntry

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 44
TOPIC_RESOURCE = 2
RESOURCE_TYPES = {"topic": 2, "broker": 4, "group": 3}
CONFIG_OPS = {"set": 0, "delete": 1, "append": 2, "subtract": 3}


def describe_configs(
    admin: AdminPlumbing,
    resource_type: str,
    name: str,
    keys: Iterable[str] | None,
    timeout_ms: int,
) -> dict[str, ConfigEntry]:
    body = {
        "resources": [
            {
                "resource_type": RESOURCE_TYPES[resource_type],
                "resource_name": name,
                "configuration_keys": None if keys is None else list(keys),
            }
        ],
        "include_synonyms": False,
        "include_documentation": False,
    }
    resp = admin._call(None, DESCRIBE_CONFIGS, body, timeout_ms)
    out: dict[str, ConfigEntry] = {}
    for r in resp["results"]:
        check_item(r["error_code"], r.get("error_message"), f"describe configs of {name!r}")
        for c in r["configs"]:
            out[c["name"]] = ConfigEntry(
                c["name"],
                c["value"],
                c["read_only"],
                c["is_sensitive"],
                c.get("config_source", -1),
            )
    return out


def alter_configs(
    admin: AdminPlumbing,
    resource_type: str,
    name: str,
    changes: Mapping[str, str | None],
    timeout_ms: int,
) -> None:
    """Incremental alter: a string value sets the key, None deletes it (back to default)."""
    body = {
        "resources": [
            {
                "resource_type": RESOURCE_TYPES[resource_type],
                "resource_name": name,
                "configs": [
                    {
                        "name": k,
                        "config_operation": CONFIG_OPS["delete" if v is None else "set"],
                        "value": v,
                    }
                    for k, v in changes.items()
                ],
            }
        ],
        "validate_only": False,
    }
    resp = admin._call(None, INCREMENTAL_ALTER_CONFIGS, body, timeout_ms)
    for r in resp["responses"]:
        check_item(r["error_code"], r.get("error_message"), f"alter configs of {name!r}")


def describe_topic_configs(
    admin: AdminPlumbing, topics: Iterable[str], keys: Iterable[str] | None, timeout_ms: int
) -> dict[str, dict[str, str | None]]:
    """Topic -> config name -> value (only ``keys`` when given)."""
    names = sorted(set(topics))
    if not names:
        return {}
    wanted = None if keys is None else list(keys)
    body = {
        "resources": [
            {"resource_type": TOPIC_RESOURCE, "resource_name": n, "configuration_keys": wanted}
            for n in names
        ],
        "include_synonyms": False,
        "include_documentation": False,
    }
    resp = admin._call(None, DESCRIBE_CONFIGS, body, timeout_ms)
    out: dict[str, dict[str, str | None]] = {}
    for r in resp["results"]:
        error = item_error(
            r["error_code"], r.get("error_message"), f"describe configs of {r['resource_name']!r}"
        )
        if error is not None:
            raise error
        out[r["resource_name"]] = {c["name"]: c["value"] for c in r["configs"]}
    return out
