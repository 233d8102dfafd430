"""The registry node's parts without a broker: the election's choice and codecs, the ACL
mapping against a real StandardAuthorizer, settings, forwarding to a real HTTP endpoint."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.registry.harness import Registry

from samsa.errors import ConfigError
from samsa.http.endpoint import HttpEndpoint
from samsa.http.messages import Request as HttpRequest
from samsa.http.messages import Response as HttpResponse
from samsa.protocol.acl import AclBinding, AclOperation, PatternType, Permission, ResourceType
from samsa.registry.api_http import Request, json_response
from samsa.registry.node.access import RegistryAccess, subject_topic
from samsa.registry.node.forwarding import FORWARDED_HEADER, ForwardingError, forward
from samsa.registry.node.identity import (
    DUPLICATE_URLS,
    Assignment,
    Identity,
    IdentityError,
    choose,
)
from samsa.registry.node.settings import advertised_identity, parse_url
from samsa.registry.node.view import RegistryView
from samsa.security.authorizer.standard import StandardAuthorizer

A = Identity("10.0.0.2", 8081)
B = Identity("10.0.0.1", 8081)
C = Identity("10.0.0.3", 8081, eligible=False)


def test_the_smallest_eligible_url_is_chosen() -> None:
    chosen = choose([("a", A), ("b", B), ("c", Identity("10.0.0.0", 8081, eligible=False))])
    assert (chosen.primary_member, chosen.primary) == ("b", B)


def test_a_primary_that_says_so_keeps_the_role() -> None:
    claiming = Identity("10.0.0.2", 8081, leader=True)
    assert choose([("a", claiming), ("b", B)]).primary_member == "a"
    # two claims (a split healed): neither wins, the smallest URL does
    both = choose([("a", claiming), ("b", Identity("10.0.0.1", 8081, leader=True))])
    assert both.primary_member == "b"


def test_no_primary_without_eligible_members_or_with_one_url_twice() -> None:
    assert choose([("c", C)]).primary is None
    duplicate = choose([("a", A), ("b", Identity("10.0.0.2", 8081))])
    assert duplicate.error == DUPLICATE_URLS and duplicate.primary is None


def test_identity_and_assignment_in_confluents_json() -> None:
    data = json.loads(Identity("h", 8081, "https").encode())
    assert data == {
        "version": 1,
        "host": "h",
        "port": 8081,
        "master_eligibility": True,
        "scheme": "https",
        "leader": False,
    }
    assignment = Assignment(0, "member-1", Identity("h", 8081))
    body = json.loads(assignment.encode())
    assert body["master"] == "member-1" and body["master_identity"]["host"] == "h"
    assert Assignment.decode(assignment.encode()) == assignment
    # Confluent's own identity (no "leader" member) reads too
    confluent = b'{"version":1,"host":"sr1","port":8081,"master_eligibility":true,"scheme":"http"}'
    assert Identity.decode(confluent).url == "http://sr1:8081"
    with pytest.raises(IdentityError):
        Identity.decode(b'{"host": 5}')


def test_advertised_url_defaults_and_validation() -> None:
    assert advertised_identity("", "127.0.0.1", 5000, False, "x", True).url == (
        "http://127.0.0.1:5000"
    )
    wildcard = advertised_identity("", "0.0.0.0", 5000, True, lambda: "broker1.example", True)
    assert wildcard.url == "https://broker1.example:5000"
    assert parse_url("https://sr.example:9443").url == "https://sr.example:9443"
    for bad in ("ftp://x:1", "http://", "http://h:1/path"):
        with pytest.raises(ConfigError):
            parse_url(bad)


def test_subjects_map_onto_topics() -> None:
    assert subject_topic("orders-value") == "orders"
    assert subject_topic("orders-key") == "orders"
    assert subject_topic("com.acme.Order") == "com.acme.Order"
    assert subject_topic("-value") == "-value"


def _authorizer(*acls: tuple[str, AclOperation, ResourceType, PatternType]) -> StandardAuthorizer:
    auth = StandardAuthorizer(super_users=["User:admin"])
    for i, (name, operation, rtype, pattern) in enumerate(acls):
        binding = AclBinding(rtype, name, pattern, "User:bob", "*", operation, Permission.ALLOW)
        auth.add(i.to_bytes(16, "big"), binding)
    return auth


def _as_bob(auth: StandardAuthorizer):  # type: ignore[no-untyped-def]
    return lambda op, rtype, name: auth.authorize("User:bob", "127.0.0.1", op, rtype, name)


def test_acl_mapping_judges_each_request_as_kafka_would() -> None:
    registry = Registry()
    schema = {"type": "record", "name": "O", "fields": []}
    assert registry.register("orders-value", schema).status == 200
    assert registry.register("com.acme.Order", schema).status == 200
    access = RegistryAccess(registry.state)
    lit, pre = PatternType.LITERAL, PatternType.PREFIXED
    topic, cluster = ResourceType.TOPIC, ResourceType.CLUSTER
    auth = _authorizer(
        ("orders", AclOperation.READ, topic, lit),
        ("com.acme", AclOperation.WRITE, topic, pre),
        ("kafka-cluster", AclOperation.DESCRIBE_CONFIGS, cluster, lit),
    )
    allowed = _as_bob(auth)

    def lacks(method: str, path: str) -> str | None:
        need = access.lacking(Request(method, path), allowed)
        return None if need is None else need.describe()

    assert lacks("GET", "/subjects/orders-value/versions/latest") is None  # READ implies DESCRIBE
    assert lacks("POST", "/subjects/orders-value") is None  # a lookup reads
    assert lacks("POST", "/subjects/orders-value/versions") == "WRITE on TOPIC orders"
    assert lacks("DELETE", "/subjects/orders-value") == "DELETE on TOPIC orders"
    assert lacks("POST", "/subjects/com.acme.Order/versions") is None  # the prefix ACL
    assert lacks("PUT", "/config/orders-value") == "ALTER_CONFIGS on TOPIC orders"
    assert lacks("GET", "/config") is None
    assert lacks("PUT", "/mode") == "ALTER_CONFIGS on CLUSTER kafka-cluster"
    assert lacks("POST", "/compatibility/subjects/orders-value/versions/latest") is None
    assert lacks("GET", "/schemas/ids/1") is None  # both subjects hold id 1
    assert lacks("GET", "/subjects/payments-value/versions") == "DESCRIBE on TOPIC payments"
    assert lacks("GET", "/schemas/types") is None

    listing = json_response(["com.acme.Order", "orders-value", "payments-value"])
    kept = access.filtered(Request("GET", "/subjects"), listing, allowed)
    assert json.loads(kept.body) == ["com.acme.Order", "orders-value"]
    nobody = _as_bob(_authorizer())
    assert lacks("GET", "/schemas/ids/1") is None
    need = access.lacking(Request("GET", "/schemas/ids/1"), nobody)
    assert need is not None and need.operation is AclOperation.DESCRIBE
    assert access.lacking(Request("GET", "/schemas/ids/999"), nobody) is None  # 404 anyway


def test_the_view_answers_whether_an_id_is_registered_for_a_subject() -> None:
    registry = Registry()
    schema = {"type": "record", "name": "O", "fields": []}
    assert registry.register("orders-value", schema).json() == {"id": 1}
    view = RegistryView(registry.state)
    assert view.is_registered(1, "orders-value")
    assert not view.is_registered(1, "payments-value")
    assert not view.is_registered(2, "orders-value")
    assert registry.call("DELETE", "/subjects/orders-value").status == 200
    assert not view.is_registered(1, "orders-value") and view.is_known_id(1)


def test_validation_follows_each_subject_name_strategy() -> None:
    registry = Registry()
    order = {"type": "record", "name": "Order", "namespace": "shop", "fields": []}
    proto = 'syntax = "proto3"; package shop; message Pay { message Line {} } message Refund {}'
    assert registry.register("orders-value", order).json() == {"id": 1}
    assert registry.register("shop.Order", order).json() == {"id": 1}  # same schema, same id
    assert registry.register("refunds-shop.Refund", proto, "PROTOBUF").json() == {"id": 2}
    view = RegistryView(registry.state)
    topic_name = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
    assert view.refusal(1, "orders", False, topic_name) is None
    assert "not registered under subject orders-key" in (
        view.refusal(1, "orders", True, topic_name) or ""
    )
    assert view.refusal(1, "payments", False, "RecordNameStrategy") is None  # any topic
    assert view.refusal(2, "refunds", False, "TopicRecordNameStrategy") is None
    refused = view.refusal(2, "other", False, "TopicRecordNameStrategy") or ""
    assert "other-shop.Pay" in refused and "other-shop.Pay.Line" in refused
    assert "registered under refunds-shop.Refund" in refused
    assert "no subject holds it" in (view.refusal(3, "orders", False, "RecordNameStrategy") or "")


def test_forwarding_passes_the_request_and_brings_the_answer_back() -> None:
    seen: list[HttpRequest] = []

    async def primary(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return HttpResponse(409, b'{"error_code":409}', "application/vnd.schemaregistry.v1+json")

    async def run() -> None:
        endpoint = HttpEndpoint("primary", {}, fallback=primary)
        host, port = await endpoint.bind("127.0.0.1", 0)
        await endpoint.serve()
        try:
            request = Request(
                "POST",
                "/subjects/a%2Fb/versions",
                {"normalize": "true"},
                {"authorization": "Basic eDp5", "content-type": "application/json", "x": "y"},
                b'{"schema": "x"}',
            )
            answer = await forward(
                f"http://{host}:{port}", request, node_id=7, context=None, timeout=5
            )
            assert (answer.status, answer.body) == (409, b'{"error_code":409}')
            assert answer.content_type == "application/vnd.schemaregistry.v1+json"
        finally:
            await endpoint.stop()
        with pytest.raises(ForwardingError):
            await forward(f"http://{host}:{port}", request, node_id=7, context=None, timeout=2)

    asyncio.run(run())
    (got,) = seen
    assert got.raw_path == "/subjects/a%2Fb/versions" and got.query == {"normalize": "true"}
    assert got.headers["authorization"] == "Basic eDp5" and "x" not in got.headers
    assert got.headers[FORWARDED_HEADER] == "7" and got.body == b'{"schema": "x"}'
