"""Actions on records and offsets: produce a test record (Produce), delete a
partition's records before an offset (DeleteRecords), reset an empty group's
offsets (OffsetCommit, as AdminClient's alterConsumerGroupOffsets)."""

from __future__ import annotations

import time
from typing import Any

from samsa.console.actions.common import TIMEOUT_MS, check, field
from samsa.console.context import ConsoleContext
from samsa.console.groups import find_group
from samsa.http.messages import HttpError
from samsa.protocol.acl import AclOperation
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.group_requests import outside_commit_request

PRODUCE, OFFSET_COMMIT, DELETE_RECORDS = 0, 8, 21
_Op = AclOperation


def _headers(raw: Any) -> list[tuple[str, bytes | None]]:
    """``{name: value}``, or ``[[name, value], ...]`` where a name repeats (as
    Kafka headers may); a null value is a header without one."""
    if isinstance(raw, dict):
        pairs: list[Any] = list(raw.items())
    elif isinstance(raw, list):
        pairs = raw
    else:
        raise HttpError(400, "headers must be an object of name: value or a list of [name, value]")
    out = []
    for pair in pairs:
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not isinstance(pair[0], str):
            raise HttpError(400, f"a header must be [name, value] with a string name, not {pair!r}")
        name, value = pair
        out.append((name, None if value is None else str(value).encode()))
    return out


async def produce(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = field(body, "topic", str)
    partition = field(body, "partition", int, 0)
    ctx.known_topic(topic, _Op.WRITE)  # Produce: WRITE on the topic
    key, value = body.get("key"), body.get("value")
    if not all(isinstance(x, str | None) for x in (key, value)):
        raise HttpError(400, "key and value must be strings (or null)")
    headers = _headers(body.get("headers") or {})
    batch = RecordBatchBuilder()
    batch.append(
        int(time.time() * 1000),
        None if key is None else key.encode(),
        None if value is None else value.encode(),
        headers,
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
    check(result["error_code"], result.get("error_message"), f"produce to {topic}-{partition}")
    return {"topic": topic, "partition": partition, "offset": result["base_offset"]}


async def reset_offsets(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    """Move an empty group's committed offsets of one topic (all its partitions,
    or one) to the earliest or latest offset, or to a given offset."""
    group_id = field(body, "group", str)
    topic = field(body, "topic", str)
    to = field(body, "to", str)
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
        partitions = [field(body, "partition", int)]
    if to == "offset":
        offsets = dict.fromkeys(partitions, field(body, "offset", int))
    elif to in ("earliest", "latest"):
        offsets = _list_offsets(ctx, topic, partitions, -2 if to == "earliest" else -1)
    else:
        raise HttpError(400, f"to must be earliest, latest or offset, not {to!r}")
    request = outside_commit_request(group_id, (((topic, p), o) for p, o in offsets.items()))
    answer = await ctx.kafka(OFFSET_COMMIT, 8, request)
    for part in answer["topics"][0]["partitions"]:
        check(part["error_code"], None, f"commit {topic}-{part['partition_index']}")
    return {"group": group_id, "topic": topic, "offsets": {str(p): o for p, o in offsets.items()}}


def _list_offsets(
    ctx: ConsoleContext, topic: str, partitions: list[int], spec: int
) -> dict[int, int]:
    out = {}
    for part in ctx.list_offsets(topic, partitions, spec):
        check(part["error_code"], None, f"offsets of {topic}-{part['partition_index']}")
        out[part["partition_index"]] = part["offset"]
    return out


async def delete_records(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = field(body, "topic", str)
    partition = field(body, "partition", int)
    offset = field(body, "offset", int)
    ctx.known_topic(topic, _Op.DELETE)  # DeleteRecords: DELETE on the topic
    answer = await ctx.kafka(DELETE_RECORDS, 2, delete_records_request(topic, {partition: offset}))
    part = answer["topics"][0]["partitions"][0]
    check(part["error_code"], None, f"delete records of {topic}-{partition} before {offset}")
    return {"topic": topic, "partition": partition, "low_watermark": part["low_watermark"]}


def delete_records_request(topic: str, offsets: dict[int, int]) -> dict[str, Any]:
    """DeleteRecords of ``{partition: before offset}`` (-1: the high watermark)."""
    partitions = [{"partition_index": p, "offset": o} for p, o in offsets.items()]
    return {"topics": [{"name": topic, "partitions": partitions}], "timeout_ms": TIMEOUT_MS}
