"""The console's actions: create a topic, add partitions, produce a test record,
reset an empty group's offsets, delete records before an offset.

Off unless the broker runs with ``console.allow.actions=true`` (403 with the
setting to change otherwise).  With ACLs on, each needs what its Kafka request
needs (checked first, so a refusal names the missing operation, and again by
the handler's own authorization check); each is logged with the user and the
client's address.  Each action is the Kafka request the CLI sends
for it (CreateTopics, CreatePartitions, Produce, OffsetCommit of an empty
group as AdminClient's alterConsumerGroupOffsets, DeleteRecords), handed to
the broker's own handler, so validation, forwarding to the controller and
error messages are exactly a client's.  Actions are POSTs with a JSON body
(``Content-Type: application/json``, which a cross-site form cannot send).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from samsa.console.context import CLUSTER, CLUSTER_NAME, TOPIC, ConsoleContext
from samsa.console.groups import find_group
from samsa.errors import ErrorCode
from samsa.http.messages import HttpError, Request, Response, json_response
from samsa.protocol.acl import AclOperation
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.group_requests import outside_commit_request

log = logging.getLogger("samsa.console")
_Op = AclOperation

PRODUCE, OFFSET_COMMIT, CREATE_TOPICS, DELETE_RECORDS, CREATE_PARTITIONS = 0, 8, 19, 21, 37
TIMEOUT_MS = 30_000
STATUS_OF = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: 404,
    ErrorCode.GROUP_ID_NOT_FOUND: 404,
    ErrorCode.TOPIC_ALREADY_EXISTS: 409,
    ErrorCode.NON_EMPTY_GROUP: 409,
    ErrorCode.UNKNOWN_MEMBER_ID: 409,
    ErrorCode.REQUEST_TIMED_OUT: 503,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: 503,
    ErrorCode.NOT_COORDINATOR: 503,
    ErrorCode.NOT_CONTROLLER: 503,
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: 403,
    ErrorCode.GROUP_AUTHORIZATION_FAILED: 403,
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: 403,
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 403,
}

Action = Callable[[ConsoleContext, dict[str, Any]], Awaitable[dict[str, Any]]]


def _field(body: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    value = body.get(name, default)
    if value is None and default is None:
        raise HttpError(400, f"{name} is required")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise HttpError(400, f"{name} must be an integer, not {value!r}")
    if kind is str and not isinstance(value, str):
        raise HttpError(400, f"{name} must be a string, not {value!r}")
    return value


def _check(code: int, message: str | None, what: str) -> None:
    if code:
        name = ErrorCode(code).name
        raise HttpError(STATUS_OF.get(ErrorCode(code), 400), f"{what}: {message or name} ({name})")


async def create_topic(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    name = _field(body, "name", str)
    # CreateTopics: CREATE on the cluster, or on the topic.
    if not ctx.may(_Op.CREATE, CLUSTER, CLUSTER_NAME):
        ctx.require(_Op.CREATE, TOPIC, name)
    configs = body.get("configs") or {}
    if not isinstance(configs, dict):
        raise HttpError(400, "configs must be an object of name: value")
    request = {
        "topics": [
            {
                "name": name,
                "num_partitions": _field(body, "partitions", int, -1),
                "replication_factor": _field(body, "replication_factor", int, -1),
                "assignments": [],
                "configs": [{"name": k, "value": str(v)} for k, v in configs.items()],
            }
        ],
        "timeout_ms": TIMEOUT_MS,
        "validate_only": False,
    }
    result = (await ctx.kafka(CREATE_TOPICS, 7, request))["topics"][0]
    _check(result["error_code"], result.get("error_message"), f"create topic {name!r}")
    return {"created": name, "partitions": result.get("num_partitions")}


async def add_partitions(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = _field(body, "topic", str)
    count = _field(body, "count", int)
    ctx.known_topic(topic, _Op.ALTER)  # CreatePartitions: ALTER on the topic
    request = {
        "topics": [{"name": topic, "count": count, "assignments": None}],
        "timeout_ms": TIMEOUT_MS,
        "validate_only": False,
    }
    result = (await ctx.kafka(CREATE_PARTITIONS, 3, request))["results"][0]
    _check(result["error_code"], result.get("error_message"), f"add partitions to {topic!r}")
    return {"topic": topic, "partitions": count}


async def produce(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = _field(body, "topic", str)
    partition = _field(body, "partition", int, 0)
    ctx.known_topic(topic, _Op.WRITE)  # Produce: WRITE on the topic
    key, value = body.get("key"), body.get("value")
    headers = body.get("headers") or {}
    if not all(isinstance(x, str | None) for x in (key, value)) or not isinstance(headers, dict):
        raise HttpError(400, "key and value must be strings (or null), headers an object")
    batch = RecordBatchBuilder()
    batch.append(
        int(time.time() * 1000),
        None if key is None else key.encode(),
        None if value is None else value.encode(),
        [(str(k), None if v is None else str(v).encode()) for k, v in headers.items()],
    )
    request = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": TIMEOUT_MS,
        "topic_data": [
            {
                "name": topic,
                "partition_data": [{"index": partition, "records": memoryview(batch.build())}],
            }
        ],
    }
    result = (await ctx.kafka(PRODUCE, 9, request))["responses"][0]["partition_responses"][0]
    _check(result["error_code"], result.get("error_message"), f"produce to {topic}-{partition}")
    return {"topic": topic, "partition": partition, "offset": result["base_offset"]}


async def reset_offsets(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    """Move an empty group's committed offsets of one topic (all its partitions,
    or one) to the earliest or latest offset, or to a given offset."""
    group_id = _field(body, "group", str)
    topic = _field(body, "topic", str)
    to = _field(body, "to", str)
    # OffsetCommit: READ on the group and on the topic.
    group = find_group(ctx, group_id, _Op.READ)
    if group.members:
        raise HttpError(
            409,
            f"group {group_id!r} is {group.state} with {len(group.members)} members: offsets can "
            "only be reset while the group is empty (stop its consumers first)",
        )
    partitions = sorted(ctx.known_topic(topic, _Op.READ).partitions)
    if body.get("partition") is not None:
        partitions = [_field(body, "partition", int)]
    if to == "offset":
        offsets = dict.fromkeys(partitions, _field(body, "offset", int))
    elif to in ("earliest", "latest"):
        offsets = _list_offsets(ctx, topic, partitions, -2 if to == "earliest" else -1)
    else:
        raise HttpError(400, f"to must be earliest, latest or offset, not {to!r}")
    request = outside_commit_request(group_id, (((topic, p), o) for p, o in offsets.items()))
    answer = await ctx.kafka(OFFSET_COMMIT, 8, request)
    for part in answer["topics"][0]["partitions"]:
        _check(part["error_code"], None, f"commit {topic}-{part['partition_index']}")
    return {"group": group_id, "topic": topic, "offsets": {str(p): o for p, o in offsets.items()}}


def _list_offsets(
    ctx: ConsoleContext, topic: str, partitions: list[int], spec: int
) -> dict[int, int]:
    out = {}
    for part in ctx.list_offsets(topic, partitions, spec):
        _check(part["error_code"], None, f"offsets of {topic}-{part['partition_index']}")
        out[part["partition_index"]] = part["offset"]
    return out


async def delete_records(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = _field(body, "topic", str)
    partition = _field(body, "partition", int)
    offset = _field(body, "offset", int)
    ctx.known_topic(topic, _Op.DELETE)  # DeleteRecords: DELETE on the topic
    request = {
        "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "offset": offset}]}
        ],
        "timeout_ms": TIMEOUT_MS,
    }
    answer = await ctx.kafka(DELETE_RECORDS, 2, request)
    part = answer["topics"][0]["partitions"][0]
    _check(part["error_code"], None, f"delete records of {topic}-{partition} before {offset}")
    return {"topic": topic, "partition": partition, "low_watermark": part["low_watermark"]}


ACTIONS: dict[str, Action] = {
    "create-topic": create_topic,
    "add-partitions": add_partitions,
    "produce": produce,
    "reset-offsets": reset_offsets,
    "delete-records": delete_records,
}


async def run_action(ctx: ConsoleContext, request: Request) -> Response:
    name = request.path.removeprefix("/api/actions/")
    action = ACTIONS.get(name)
    if action is None:
        raise HttpError(404, f"no action {name!r}; actions: {', '.join(ACTIONS)}")
    if not ctx.allow_actions:
        raise HttpError(
            403,
            "actions are disabled on this broker: start it with console.allow.actions=true "
            "to create topics, add partitions, produce, reset offsets or delete records here",
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
    """The action and what it names, for the log (never a record's key or value)."""
    named = {
        k: body.get(k) for k in ("name", "topic", "group", "partition", "count", "to", "offset")
    }
    shown = " ".join(f"{k}={v!r}" for k, v in named.items() if v is not None)
    return f"{name} {shown}".strip()
