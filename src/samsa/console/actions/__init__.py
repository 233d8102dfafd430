"""The console's actions: its only writes, each the Kafka request the CLI sends.

Each is handed to the broker's own handler as the logged-in user.

Off unless the broker runs with ``console.allow.actions=true`` (403 with the
setting to change otherwise).  With ACLs on, each needs what its Kafka request
needs (checked first, so a refusal names the missing operation, and again by
the handler's own authorization check); each is logged with the user and the
client's address.  Topics (``topic_actions``): create, add partitions, alter
configs, delete, purge; records and offsets (``record_actions``): produce,
delete records, reset an empty group's offsets; ACLs (``acl_actions``):
create, delete.  Validation, forwarding to the controller and error messages
are exactly a client's.  Actions are POSTs with a JSON body
(``Content-Type: application/json``, which a cross-site form cannot send).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from samsa.console.actions import acl_actions, record_actions, topic_actions
from samsa.console.actions.common import Action
from samsa.console.context import ConsoleContext
from samsa.http.messages import HttpError, Request, Response, json_response

log = logging.getLogger("samsa.console")

ACTIONS: dict[str, Action] = {
    "create-topic": topic_actions.create_topic,
    "add-partitions": topic_actions.add_partitions,
    "alter-configs": topic_actions.alter_configs,
    "delete-topic": topic_actions.delete_topic,
    "purge-topic": topic_actions.purge_topic,
    "produce": record_actions.produce,
    "reset-offsets": record_actions.reset_offsets,
    "delete-records": record_actions.delete_records,
    "create-acl": acl_actions.create_acl,
    "delete-acl": acl_actions.delete_acl,
}
LOGGED_FIELDS = (
    "name",
    "topic",
    "group",
    "partition",
    "count",
    "to",
    "offset",
    "principal",
    "operation",
    "permission",
    "resource_type",
    "resource_name",
)


async def run_action(ctx: ConsoleContext, request: Request) -> Response:
    name = request.path.removeprefix("/api/actions/")
    action = ACTIONS.get(name)
    if action is None:
        raise HttpError(404, f"no action {name!r}; actions: {', '.join(ACTIONS)}")
    if not ctx.allow_actions:
        raise HttpError(
            403,
            "actions are disabled on this broker: start it with console.allow.actions=true "
            "to create topics, change them, produce, reset offsets or delete records here",
        )
    if request.content_type != "application/json":
        raise HttpError(415, "actions take a JSON body (Content-Type: application/json)")
    try:
        body = json.loads(request.body or b"{}")
    except ValueError as exc:
        raise HttpError(400, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object")
    who = f"{ctx.caller.principal_name} from {ctx.caller.peer}"
    what = _summary(name, body)
    try:
        done = await action(ctx, body)
    except HttpError as exc:
        log.warning("console action %s by %s refused (%d): %s", what, who, exc.status, exc.message)
        raise
    except Exception:
        log.warning("console action %s by %s failed", what, who)
        raise
    log.info("console action %s by %s: done %s", what, who, done)
    return json_response({"ok": True, **done})


def _summary(name: str, body: dict[str, Any]) -> str:
    """The action and what it names, for the log (never a record's key, value
    or headers, nor a config's new value)."""
    named: dict[str, Any] = {k: body.get(k) for k in LOGGED_FIELDS}
    if isinstance(body.get("set"), dict):
        named["set"] = sorted(str(k) for k in body["set"])
    if isinstance(body.get("delete"), list):
        named["delete"] = body["delete"]
    shown = " ".join(f"{k}={v!r}" for k, v in named.items() if v is not None)
    return f"{name} {shown}".strip()
