"""The router's Kafka 4.4 rules, without a network: what a client listener
advertises, ApiVersions 3-5's checks, and translators that run outside any
wrapper of a handler (topic ids resolved before the ACL check sees a name)."""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.api import decode_response, encode_request
from samsa.security.caller import caller_at
from samsa.security.principal import user
from samsa.server.connections.router import Body, Handler, RequestContext, Router

ADMIN = caller_at(user("admin"), "127.0.0.1", 1)

API_VERSIONS, PRODUCE, VOTE, BROKER_HEARTBEAT = 18, 0, 52, 63
SOFTWARE = {"client_software_name": "test-client", "client_software_version": "1.0"}


def ask(router: Router, api_key: int, version: int, body: Body) -> Body:
    frame = encode_request(api_key, version, 7, "test", body)[4:]
    output = router.dispatch(frame, None)
    assert isinstance(output, list)
    frame = b"".join(bytes(chunk) for chunk in output)[4:]  # without the size
    _, answer = decode_response(api_key, version, memoryview(frame))
    return answer


def router_with(*keys: int) -> Router:
    router = Router()
    for key in keys:
        router.register(key, lambda ctx, req: {"error_code": 0})
    return router


def advertised(router: Router, version: int = 4) -> set[int]:
    return {k["api_key"] for k in ask(router, API_VERSIONS, version, SOFTWARE)["api_keys"]}


def test_a_client_listener_leaves_out_controller_only_apis() -> None:
    router = router_with(PRODUCE, VOTE, BROKER_HEARTBEAT)
    assert advertised(router) == {API_VERSIONS, PRODUCE, VOTE, BROKER_HEARTBEAT}
    router.client_facing = True
    assert advertised(router) == {API_VERSIONS, PRODUCE}
    # Still served: a quorum peer on a shared listener asks without ApiVersions.
    assert router.handles(VOTE)


def test_api_versions_5_names_the_cluster_and_node_it_means() -> None:
    router = router_with(PRODUCE)
    router.identity = ("cluster-a", 3)

    def code(**fields: Any) -> int:
        return int(ask(router, API_VERSIONS, 5, {**SOFTWARE, **fields})["error_code"])

    assert code(cluster_id="cluster-a", node_id=3) == 0
    assert code(cluster_id=None, node_id=-1) == 0  # not named: not checked
    assert code(cluster_id="cluster-a", node_id=4) == ErrorCode.REBOOTSTRAP_REQUIRED
    assert code(cluster_id="cluster-b", node_id=3) == ErrorCode.REBOOTSTRAP_REQUIRED
    refused = ask(router, API_VERSIONS, 5, {**SOFTWARE, "cluster_id": "x", "node_id": 3})
    assert refused["api_keys"] == []


def test_api_versions_3_checks_the_client_software_names() -> None:
    router = router_with(PRODUCE)
    for name, version in (("-bad", "1"), ("ok", "1.0."), ("", "1"), ("a b", "1")):
        body = {"client_software_name": name, "client_software_version": version}
        assert ask(router, API_VERSIONS, 3, body)["error_code"] == ErrorCode.INVALID_REQUEST
    assert ask(router, API_VERSIONS, 2, {})["error_code"] == 0  # v0-2 carry no names


def test_features_with_a_zero_minimum_only_from_v4() -> None:
    router = router_with(PRODUCE)
    router.features = lambda: {
        "supported_features": [
            {"name": "metadata.version", "min_version": 7, "max_version": 27},
            {"name": "group.version", "min_version": 0, "max_version": 1},
        ],
        "finalized_features_epoch": 5,
        "finalized_features": [],
    }

    def names(version: int) -> list[str]:
        answer = ask(router, API_VERSIONS, version, SOFTWARE)
        return [f["name"] for f in answer["supported_features"]]

    assert names(3) == ["metadata.version"]  # KAFKA-17011: older clients refuse a 0
    assert names(4) == ["metadata.version", "group.version"]


def test_a_translator_runs_outside_wrappers_registered_after_it() -> None:
    seen: list[str] = []
    router = Router()
    router.register(PRODUCE, lambda ctx, req: {"seen_by_handler": req["marker"]})

    def translate(handler: Handler, ctx: RequestContext, req: Body) -> Any:
        seen.append("translator")
        return handler(ctx, {**req, "marker": "translated"})

    router.translate(PRODUCE, translate)
    inner = router.handler(PRODUCE)
    assert inner is not None

    def guard(ctx: RequestContext, req: Body) -> Any:
        seen.append(f"guard saw {req['marker']}")
        return inner(ctx, req)

    router.register(PRODUCE, guard)  # as access.guard_all wraps handlers
    answer = router.call(PRODUCE, 13, {"marker": "raw"}, "test", caller=ADMIN)
    assert answer == {"seen_by_handler": "translated"}
    assert seen == ["translator", "guard saw translated"]
