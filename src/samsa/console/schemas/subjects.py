"""The subjects page: the schema registry's subjects, their versions, compatibility, and diffs.

Read from the registry's state on this broker (``registry_port``), through
the REST API's own GETs, as the logged-in caller: with an authorizer a user
sees the subjects whose topic they may DESCRIBE, a subject's compatibility
level if they may DESCRIBE_CONFIGS it (otherwise it shows as unknown), and is
refused a subject they may not see (403), as over the REST API.  The
schemas are shown pretty-printed (Avro and JSON Schema as indented JSON,
Protobuf as the registry's canonical text) so that ``diff`` -- a unified
diff of two versions' text -- reads line by line.

    GET /api/subjects                          every visible subject, its latest version
    GET /api/subjects/{subject}                its versions with their schemas
    GET /api/subjects/{subject}/diff?from=1&to=2
"""

from __future__ import annotations

import difflib
import json
from typing import Any
from urllib.parse import quote, unquote

from samsa.console.context import ConsoleContext
from samsa.console.params import int_param
from samsa.console.schemas.registry_port import ConsoleRegistry
from samsa.http.messages import HttpError, Request, Response, json_response

MAX_SUBJECTS = 2000


def list_subjects(ctx: ConsoleContext, request: Request) -> Response:
    registry = ctx.broker.schema_registry()
    if registry is None:
        return json_response({"registry": False, "starting": False, "subjects": []})
    status, names = registry.get(ctx.caller, "/subjects")
    if status == 503:
        return json_response({"registry": True, "starting": True, "subjects": []})
    _check(status, names)
    needle = request.query.get("q", "").lower()
    rows = []
    for name in names[:MAX_SUBJECTS]:
        if needle and needle not in name.lower():
            continue
        status, latest = registry.get(ctx.caller, f"/subjects/{_seg(name)}/versions/latest")
        if status != 200:
            continue  # deleted between the two reads
        rows.append(
            {
                "subject": name,
                "version": latest["version"],
                "id": latest["id"],
                "type": latest.get("schemaType", "AVRO"),
                "compatibility": _compatibility(ctx, registry, name),
            }
        )
    return json_response(
        {"registry": True, "starting": False, "subjects": rows, "total": len(names)}
    )


def subject_page(ctx: ConsoleContext, request: Request) -> Response:
    raw = request.raw_path or request.path
    rest = raw.split("/api/subjects/", 1)[1]
    encoded, _, what = rest.partition("/")
    subject = unquote(encoded)
    registry = ctx.broker.schema_registry()
    if registry is None:
        raise HttpError(404, "this cluster has no schema registry")
    if what == "diff":
        return _diff(ctx, registry, subject, request)
    if what:
        raise HttpError(404, f"no such page: {request.path}")
    versions = _versions(ctx, registry, subject)
    _, mode = registry.get(ctx.caller, f"/mode/{_seg(subject)}", {"defaultToGlobal": "true"})
    return json_response(
        {
            "subject": subject,
            "compatibility": _compatibility(ctx, registry, subject),
            "mode": mode.get("mode") if isinstance(mode, dict) else None,
            "versions": versions,
        }
    )


def _versions(ctx: ConsoleContext, registry: ConsoleRegistry, subject: str) -> list[dict[str, Any]]:
    status, numbers = registry.get(ctx.caller, f"/subjects/{_seg(subject)}/versions")
    _check(status, numbers)
    found = []
    for number in numbers:
        status, version = registry.get(ctx.caller, f"/subjects/{_seg(subject)}/versions/{number}")
        if status != 200:
            continue
        kind = version.get("schemaType", "AVRO")
        found.append(
            {
                "version": version["version"],
                "id": version["id"],
                "type": kind,
                "references": version.get("references", []),
                "schema": pretty(kind, version["schema"]),
            }
        )
    return found


def _diff(
    ctx: ConsoleContext, registry: ConsoleRegistry, subject: str, request: Request
) -> Response:
    versions = {v["version"]: v for v in _versions(ctx, registry, subject)}
    if not versions:
        raise HttpError(404, f"subject {subject!r} has no versions")
    newest = max(versions)
    old = int_param(request, "from", max(1, newest - 1), low=1)
    new = int_param(request, "to", newest, low=1)
    for number in (old, new):
        if number not in versions:
            raise HttpError(
                404, f"subject {subject!r} has no version {number} (it has {sorted(versions)})"
            )
    lines = list(
        difflib.unified_diff(
            versions[old]["schema"].splitlines(),
            versions[new]["schema"].splitlines(),
            f"{subject} version {old}",
            f"{subject} version {new}",
            lineterm="",
        )
    )
    return json_response({"subject": subject, "from": old, "to": new, "diff": lines})


def _compatibility(ctx: ConsoleContext, registry: ConsoleRegistry, subject: str) -> str | None:
    status, config = registry.get(
        ctx.caller, f"/config/{_seg(subject)}", {"defaultToGlobal": "true"}
    )
    if status != 200 or not isinstance(config, dict):
        return None  # the caller may not DESCRIBE_CONFIGS it
    level = config.get("compatibilityLevel") or config.get("compatibility")
    return str(level) if level else None


def pretty(kind: str, text: str) -> str:
    """A schema's text for reading and diffing: JSON indented, Protobuf as stored."""
    if kind in ("AVRO", "JSON"):
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return text
    return text


def _check(status: int, body: Any) -> None:
    if status != 200:
        message = body.get("message") if isinstance(body, dict) else str(body)
        raise HttpError(status if status in (403, 404) else 502, str(message))


def _seg(subject: str) -> str:
    return quote(subject, safe="")
