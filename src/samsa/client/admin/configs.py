"""Configs of many topics in one DescribeConfigs (32) request.

A cluster-wide view (under-min-ISR partitions need every topic's
``min.insync.replicas``) would otherwise cost one round trip per topic; Kafka's
tools batch the resources the same way.  Topic configs are the same on every
broker, so any broker answers.
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing

DESCRIBE_CONFIGS = 32
TOPIC_RESOURCE = 2


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
