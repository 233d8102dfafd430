"""Actions on topics: create one (CreateTopics), add partitions
(CreatePartitions), change its configs (IncrementalAlterConfigs), delete it
(DeleteTopics) or purge it (DeleteRecords up to the high watermark of every
partition, as ``kafka-delete-records`` with offset -1).

Deleting and purging need ``confirm`` set to the topic's name, which the page
makes the user type.  A purge is answered per partition: on a cluster the
partitions another broker leads are refused here (NOT_LEADER_OR_FOLLOWER) and
listed under ``failed``, as the records of the others go.
"""

from __future__ import annotations

from typing import Any

from samsa.console.actions.common import TIMEOUT_MS, check, confirmed, field
from samsa.console.actions.record_actions import DELETE_RECORDS, delete_records_request
from samsa.console.context import CLUSTER, CLUSTER_NAME, TOPIC, ConsoleContext
from samsa.errors import ErrorCode
from samsa.http.messages import HttpError
from samsa.protocol.acl import AclOperation

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS = 19, 20, 37, 44
RESOURCE_TOPIC = 2
SET, DELETE = 0, 1
_Op = AclOperation
NO_TOPIC_ID = b"\x00" * 16


async def create_topic(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    name = field(body, "name", str)
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
                "num_partitions": field(body, "partitions", int, -1),
                "replication_factor": field(body, "replication_factor", int, -1),
                "assignments": [],
                "configs": [{"name": k, "value": str(v)} for k, v in configs.items()],
            }
        ],
        "timeout_ms": TIMEOUT_MS,
        "validate_only": False,
    }
    result = (await ctx.kafka(CREATE_TOPICS, 7, request))["topics"][0]
    check(result["error_code"], result.get("error_message"), f"create topic {name!r}")
    return {"created": name, "partitions": result.get("num_partitions")}


async def add_partitions(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = field(body, "topic", str)
    count = field(body, "count", int)
    ctx.known_topic(topic, _Op.ALTER)  # CreatePartitions: ALTER on the topic
    request = {
        "topics": [{"name": topic, "count": count, "assignments": None}],
        "timeout_ms": TIMEOUT_MS,
        "validate_only": False,
    }
    result = (await ctx.kafka(CREATE_PARTITIONS, 3, request))["results"][0]
    check(result["error_code"], result.get("error_message"), f"add partitions to {topic!r}")
    return {"topic": topic, "partitions": count}


async def alter_configs(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    """``set`` ({name: value}) and ``delete`` ([name]: back to the default) in one
    IncrementalAlterConfigs, as ``samsa topics alter --config/--delete-config`` sends them."""
    topic = field(body, "topic", str)
    changes = body.get("set") or {}
    removed = body.get("delete") or []
    if not isinstance(changes, dict) or not isinstance(removed, list):
        raise HttpError(400, "set must be an object of name: value, delete a list of names")
    if not changes and not removed:
        raise HttpError(400, "nothing to change: give set or delete")
    if not all(isinstance(name, str) for name in [*changes, *removed]):
        raise HttpError(400, "config names must be strings")
    ctx.known_topic(topic, _Op.ALTER_CONFIGS)  # IncrementalAlterConfigs: ALTER_CONFIGS
    entries = [{"name": k, "config_operation": SET, "value": str(v)} for k, v in changes.items()]
    entries += [{"name": k, "config_operation": DELETE, "value": None} for k in removed]
    request = {
        "resources": [
            {"resource_type": RESOURCE_TOPIC, "resource_name": topic, "configs": entries}
        ],
        "validate_only": False,
    }
    result = (await ctx.kafka(INCREMENTAL_ALTER_CONFIGS, 1, request))["responses"][0]
    check(result["error_code"], result.get("error_message"), f"alter configs of {topic!r}")
    return {"topic": topic, "set": {k: str(v) for k, v in changes.items()}, "deleted": removed}


async def delete_topic(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = field(body, "topic", str)
    ctx.known_topic(topic, _Op.DELETE)  # DeleteTopics: DELETE on the topic
    confirmed(body, topic, "deleting a topic")
    request = {"topics": [{"name": topic, "topic_id": NO_TOPIC_ID}], "timeout_ms": TIMEOUT_MS}
    result = (await ctx.kafka(DELETE_TOPICS, 6, request))["responses"][0]
    check(result["error_code"], result.get("error_message"), f"delete topic {topic!r}")
    return {"deleted": topic}


async def purge_topic(ctx: ConsoleContext, body: dict[str, Any]) -> dict[str, Any]:
    topic = field(body, "topic", str)
    image = ctx.known_topic(topic, _Op.DELETE)  # DeleteRecords: DELETE on the topic
    confirmed(body, topic, "purging a topic")
    request = delete_records_request(topic, dict.fromkeys(sorted(image.partitions), -1))
    answer = await ctx.kafka(DELETE_RECORDS, 2, request)
    purged, failed = [], []
    for part in answer["topics"][0]["partitions"]:
        index, code = part["partition_index"], part["error_code"]
        if code:
            leader = image.partitions[index].leader if index in image.partitions else -1
            reason = ErrorCode(code).name
            if code == ErrorCode.NOT_LEADER_OR_FOLLOWER and leader >= 0:
                reason += f": led by broker {leader}, purge it from that broker's console"
            elif code == ErrorCode.POLICY_VIOLATION:
                reason += ": a compacted topic's records cannot be deleted before their time"
            failed.append({"partition": index, "error": reason, "error_code": code})
        else:
            purged.append({"partition": index, "low_watermark": part["low_watermark"]})
    if failed and not purged:
        first = failed[0]
        check(first["error_code"], first["error"], f"purge {topic!r}")
    return {"topic": topic, "purged": purged, "failed": failed}
