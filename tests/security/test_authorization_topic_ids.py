"""ACL checks of the requests that name topics by id (Fetch 18, Produce 13).

The router resolves ids to names before the checks run, so the checks judge the
topic a client means; refusals go back under the id the client used, and an
incremental fetch session stops serving a topic whose READ was revoked.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from tests.security.acl_broker import AclBroker
from tests.security.acl_broker import acl_broker as acl_broker

from samsa.errors import ErrorCode
from samsa.protocol.batches.record_builder import RecordBatchBuilder

TOPIC_RESOURCE, LITERAL, ALLOW, READ = 2, 3, 3, 3


def read_acl(topic: str, user: str) -> dict[str, Any]:
    return {
        "resource_type": TOPIC_RESOURCE,
        "resource_name": topic,
        "resource_pattern_type": LITERAL,
        "principal": f"User:{user}",
        "host": "*",
        "operation": READ,
        "permission_type": ALLOW,
    }


def produce_v13(acl: AclBroker, user: str, topic_id: bytes) -> dict[str, Any]:
    builder = RecordBatchBuilder()
    builder.append(int(time.time() * 1000), None, b"v")
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [
            {
                "topic_id": topic_id,
                "partition_data": [{"index": 0, "records": bytes(builder.build())}],
            }
        ],
    }
    (topic,) = acl.call(user, 0, 13, body)["responses"]
    return dict(topic)


def fetch_v18(acl: AclBroker, user: str, topics: list[bytes], **fields: Any) -> dict[str, Any]:
    body = {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
            }
            for topic_id in topics
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
        **fields,
    }
    return acl.call(user, 1, 18, body)


def test_checks_by_id_refuse_under_the_id_and_follow_revocations(acl_broker: AclBroker) -> None:
    topic = f"by-id-{uuid.uuid4().hex[:8]}"
    created = acl_broker.call(
        "admin",
        19,
        7,
        {
            "topics": [
                {
                    "name": topic,
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "assignments": [],
                    "configs": [],
                }
            ],
            "timeout_ms": 30000,
            "validate_only": False,
        },
    )
    assert created["topics"][0]["error_code"] == 0
    topic_id = bytes(created["topics"][0]["topic_id"])
    deadline = time.monotonic() + 15
    while produce_v13(acl_broker, "admin", topic_id)["partition_responses"][0]["error_code"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)

    refused = produce_v13(acl_broker, "bob", topic_id)
    assert refused["topic_id"] == topic_id
    assert refused["partition_responses"][0]["error_code"] == ErrorCode.TOPIC_AUTHORIZATION_FAILED

    granted = acl_broker.call("admin", 30, 3, {"creations": [read_acl(topic, "alice")]})
    assert granted["results"][0]["error_code"] == 0
    deadline = time.monotonic() + 15
    while True:
        opened = fetch_v18(acl_broker, "alice", [topic_id], session_epoch=0)
        (answer,) = opened["responses"]
        if answer["partitions"][0]["error_code"] == 0:
            break
        assert time.monotonic() < deadline, opened
        time.sleep(0.1)
    assert answer["topic_id"] == topic_id and answer["partitions"][0]["records"]

    revoked = acl_broker.call(
        "admin",
        31,
        3,
        {
            "filters": [
                {
                    "resource_type_filter": TOPIC_RESOURCE,
                    "resource_name_filter": topic,
                    "pattern_type_filter": LITERAL,
                    "principal_filter": "User:alice",
                    "host_filter": None,
                    "operation": READ,
                    "permission_type": ALLOW,
                }
            ]
        },
    )
    assert revoked["filter_results"][0]["error_code"] == 0
    produce_v13(acl_broker, "admin", topic_id)  # news for the session to answer
    deadline = time.monotonic() + 15
    epoch = 1
    while True:
        incremental = fetch_v18(
            acl_broker,
            "alice",
            [],
            session_id=opened["session_id"],
            session_epoch=epoch,
            max_wait_ms=200,
        )
        epoch += 1
        codes = [
            (t["topic_id"], p["error_code"])
            for t in incremental["responses"]
            for p in t["partitions"]
        ]
        if (topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED) in codes:
            break
        assert time.monotonic() < deadline, incremental
