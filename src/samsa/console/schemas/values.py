"""Records of the message browser read with their schemas, beside their bytes.

A key or value that starts with Confluent's header (the magic byte 0 and a
schema id) is decoded with that schema from the registry on this broker
(``registry_port``), as the logged-in caller: the row gains ``key_schema`` /
``value_schema`` -- the id, a subject and version holding it, the format and
the decoded value as JSON (or why it could not be decoded, or that the caller
may not see the schema).  The raw rendering stays as it was.
"""

from __future__ import annotations

from typing import Any

from samsa.console.context import ConsoleContext


def with_schemas(ctx: ConsoleContext, row: dict[str, Any], record: Any) -> dict[str, Any]:
    """``row`` (the browser's record) with its key and value decoded where framed."""
    registry = ctx.broker.schema_registry()
    if registry is None:
        return row
    for field in ("key", "value"):
        data = getattr(record, field)
        if data is None or len(data) < 5 or data[0] != 0:
            continue
        decoded = registry.decode(ctx.caller, bytes(data))
        if decoded is not None:
            row[f"{field}_schema"] = decoded
    return row
