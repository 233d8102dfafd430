"""What a controller that is not the active one answers, in each API's shape.

A request that reaches a node which is not (or no longer) the active
controller gets NOT_CONTROLLER in the form its API answers errors, so the
sender (a broker's controller link, a forwarded client request) retries on
the active one.  The controller APIs' keys live here too.
"""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode

Body = dict[str, Any]

CREATE_TOPICS, DELETE_TOPICS, ALTER_CONFIGS, CREATE_PARTITIONS = 19, 20, 33, 37
ELECT_LEADERS, INCREMENTAL_ALTER_CONFIGS = 43, 44
ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 45, 46
ALTER_PARTITION, BROKER_REGISTRATION, BROKER_HEARTBEAT, UNREGISTER_BROKER = 56, 62, 63, 64
ASSIGN_REPLICAS_TO_DIRS = 73
UPDATE_FEATURES = 57
UNREGISTER_CONTROLLER = 94
ALLOCATE_PRODUCER_IDS = 67
ALTER_USER_SCRAM_CREDENTIALS = 51
CREATE_ACLS, DELETE_ACLS = 30, 31
ALTER_CLIENT_QUOTAS = 49
DESCRIBE_QUORUM, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER = 55, 80, 81
QUORUM_APIS = frozenset({DESCRIBE_QUORUM, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER})


def not_controller_response(api_key: int, body: Body) -> Body:
    """What a non-active controller answers, in each API's own shape."""
    code = ErrorCode.NOT_CONTROLLER
    message = "this node is not the active controller"
    if api_key == CREATE_TOPICS:
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "topic_id": b"\x00" * 16,
                    "error_code": code,
                    "error_message": message,
                    "num_partitions": -1,
                    "replication_factor": -1,
                    "configs": None,
                }
                for t in body.get("topics", [])
            ],
        }
    if api_key == DELETE_TOPICS:
        names = [t.get("name") for t in body.get("topics", [])] or body.get("topic_names", [])
        return {
            "throttle_time_ms": 0,
            "responses": [
                {"name": n, "topic_id": b"\x00" * 16, "error_code": code, "error_message": message}
                for n in names
            ],
        }
    if api_key == CREATE_PARTITIONS:
        return {
            "throttle_time_ms": 0,
            "results": [
                {"name": t["name"], "error_code": code, "error_message": message}
                for t in body.get("topics", [])
            ],
        }
    if api_key in (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS):
        return {
            "throttle_time_ms": 0,
            "responses": [
                {
                    "error_code": code,
                    "error_message": message,
                    "resource_type": r["resource_type"],
                    "resource_name": r["resource_name"],
                }
                for r in body.get("resources", [])
            ],
        }
    if api_key == ELECT_LEADERS:
        return {"throttle_time_ms": 0, "error_code": code, "replica_election_results": []}
    if api_key == ALTER_CLIENT_QUOTAS:
        return {
            "throttle_time_ms": 0,
            "entries": [
                {"error_code": code, "error_message": message, "entity": entry["entity"]}
                for entry in body.get("entries", [])
            ],
        }
    if api_key in (ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS):
        return {
            "throttle_time_ms": 0,
            "error_code": code,
            "error_message": message,
            "responses": [],
            "topics": [],
        }
    if api_key == ALTER_PARTITION:
        return {"throttle_time_ms": 0, "error_code": code, "topics": []}
    if api_key == ASSIGN_REPLICAS_TO_DIRS:
        return {"throttle_time_ms": 0, "error_code": code, "directories": []}
    if api_key == BROKER_REGISTRATION:
        return {"throttle_time_ms": 0, "error_code": code, "broker_epoch": -1}
    if api_key == BROKER_HEARTBEAT:
        return {
            "throttle_time_ms": 0,
            "error_code": code,
            "is_caught_up": False,
            "is_fenced": True,
            "should_shut_down": False,
        }
    if api_key in (
        UNREGISTER_BROKER,
        ADD_RAFT_VOTER,
        REMOVE_RAFT_VOTER,
        UPDATE_FEATURES,
        UNREGISTER_CONTROLLER,
    ):
        return {"throttle_time_ms": 0, "error_code": code, "error_message": message}
    if api_key == DESCRIBE_QUORUM:
        return {"error_code": code, "error_message": message, "topics": [], "nodes": []}
    if api_key == ALTER_USER_SCRAM_CREDENTIALS:
        users = dict.fromkeys(c["name"] for c in [*body["deletions"], *body["upsertions"]])
        return {
            "throttle_time_ms": 0,
            "results": [{"user": u, "error_code": code, "error_message": message} for u in users],
        }
    if api_key == ALLOCATE_PRODUCER_IDS:
        return {
            "throttle_time_ms": 0,
            "error_code": code,
            "producer_id_start": -1,
            "producer_id_len": 0,
        }
    if api_key == CREATE_ACLS:
        return {
            "throttle_time_ms": 0,
            "results": [
                {"error_code": code, "error_message": message} for _ in body.get("creations", [])
            ],
        }
    if api_key == DELETE_ACLS:
        return {
            "throttle_time_ms": 0,
            "filter_results": [
                {"error_code": code, "error_message": message, "matching_acls": []}
                for _ in body.get("filters", [])
            ],
        }
    return {"error_code": code}
