"""With an authorizer on, no API is left open by accident: every API a module
does not check is refused to principals without CLUSTER_ACTION."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from samsa.errors import ErrorCode
from samsa.protocol.api import RequestHeader
from samsa.protocol.messages import APIS
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.server.access import OPEN_APIS, cluster_action_only, guard_all
from samsa.server.connections.router import RequestContext, Router
from samsa.server.connections.socket_server import CloseConnection

SENTINEL = {"reached": True}


def _context(key: int, principal: str) -> RequestContext:
    connection = SimpleNamespace(principal_name=principal, host="127.0.0.1")
    header = RequestHeader(key, APIS[key].valid[1], 1, "test")
    return RequestContext(header, connection)  # type: ignore[arg-type]


def _inner(ctx: RequestContext, req: dict[str, Any]) -> Any:
    return SENTINEL


def test_every_api_but_the_open_ones_is_wrapped() -> None:
    router = Router()
    for key in APIS:
        if key != 18:
            router.register(key, _inner)
    before = {key: router.handler(key) for key in router.api_keys()}
    broker = SimpleNamespace(image=SimpleNamespace(topics_by_id={}, topics={}))
    guard_all(router, StandardAuthorizer(super_users=["User:admin"]), broker)
    open_keys = {key for key in router.api_keys() if router.handler(key) is before[key]}
    assert open_keys <= OPEN_APIS


def _key(with_error_field: bool) -> int:
    return next(
        key
        for key, spec in sorted(APIS.items())
        if key not in OPEN_APIS
        and any(f.name == "error_code" for f in spec.response) == with_error_field
    )


def test_an_api_no_module_checks_needs_cluster_action() -> None:
    auth = StandardAuthorizer(super_users=["User:admin"])
    key = _key(with_error_field=True)
    check = cluster_action_only(key)
    assert check(auth, _context(key, "User:admin"), {}, _inner) is SENTINEL
    refused = check(auth, _context(key, "User:alice"), {}, _inner)
    assert refused["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_without_an_error_field_the_connection_is_closed() -> None:
    auth = StandardAuthorizer(super_users=["User:admin"])
    key = _key(with_error_field=False)
    check = cluster_action_only(key)
    assert check(auth, _context(key, "User:admin"), {}, _inner) is SENTINEL
    with pytest.raises(CloseConnection):
        check(auth, _context(key, "User:alice"), {}, _inner)


def _guarded(key: int) -> Router:
    router = Router()
    router.register(key, _inner)
    broker = SimpleNamespace(image=SimpleNamespace(topics_by_id={}, topics={}))
    guard_all(router, StandardAuthorizer(super_users=["User:admin"]), broker)
    return router


def _call(router: Router, key: int, principal: str, body: dict[str, Any]) -> Any:
    handler = router.handler(key)
    assert handler is not None
    return handler(_context(key, principal), body)


def test_share_group_apis_need_the_group() -> None:
    for key, body in (
        (76, {"group_id": "g"}),
        (78, {"group_id": "g", "topics": []}),
        (79, {"group_id": "g", "topics": []}),
        (91, {"group_id": "g"}),
        (92, {"group_id": "g"}),
    ):
        router = _guarded(key)
        assert _call(router, key, "User:admin", body) is SENTINEL
        assert _call(router, key, "User:alice", body)["error_code"] == (
            ErrorCode.GROUP_AUTHORIZATION_FAILED
        )


def test_scram_apis_need_the_cluster() -> None:
    describe = _guarded(50)
    refused = _call(describe, 50, "User:alice", {"users": None})
    assert refused["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    alter = _guarded(51)
    body = {"deletions": [{"name": "bob", "mechanism": 1}], "upsertions": []}
    assert _call(alter, 51, "User:admin", body) is SENTINEL
    answer = _call(alter, 51, "User:alice", body)
    assert answer["results"] == [
        {
            "user": "bob",
            "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            "error_message": "Cluster authorization failed.",
        }
    ]


def test_client_quota_apis_need_the_clusters_configs() -> None:
    describe = _guarded(48)
    refused = _call(describe, 48, "User:alice", {"components": []})
    assert refused["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    alter = _guarded(49)
    entity = [{"entity_type": "user", "entity_name": "bob"}]
    body = {"entries": [{"entity": entity, "ops": []}], "validate_only": False}
    assert _call(alter, 49, "User:admin", body) is SENTINEL
    answer = _call(alter, 49, "User:alice", body)
    assert [e["error_code"] for e in answer["entries"]] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
    assert answer["entries"][0]["entity"] == entity


def test_alter_replica_log_dirs_needs_the_clusters_alter() -> None:
    """Kafka's answer when refused: every partition named, one topic entry per
    dir and topic, CLUSTER_AUTHORIZATION_FAILED (the response has no top-level
    error)."""
    router = _guarded(34)
    body = {
        "dirs": [
            {"path": "/data/b", "topics": [{"name": "t", "partitions": [0, 1]}]},
            {"path": "/data/c", "topics": [{"name": "t", "partitions": [2]}]},
        ]
    }
    assert _call(router, 34, "User:admin", body) is SENTINEL
    denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert _call(router, 34, "User:alice", body)["results"] == [
        {
            "topic_name": "t",
            "partitions": [
                {"partition_index": 0, "error_code": denied},
                {"partition_index": 1, "error_code": denied},
            ],
        },
        {"topic_name": "t", "partitions": [{"partition_index": 2, "error_code": denied}]},
    ]
