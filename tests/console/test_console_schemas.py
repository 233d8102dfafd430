"""The console's schema registry pages in Chromium (issue 35): the subjects page (versions,
compatibility, a diff between two versions) and the message browser showing a record
decoded with its schema beside its bytes; with an authorizer, what a user sees follows
the registry's ACL mapping (a subject is judged as its topic).

Two brokers serve the registry and the console: an open one for the pages, and one with
SASL users and StandardAuthorizer for the ACL mapping, checked over the console's API."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AclOperation, AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tests.console.conftest import api, console_address, console_broker, snap
from tests.console.secured import (
    PASSWORDS,
    Console,
    console_url,
    grant,
    kafka_conf,
    security_settings,
)
from tests.registry.served import call, registry_url
from tests.security.acl_broker import free_port

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.timeout(240)
expect = playwright_api.expect

V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
}
V2 = {
    **V1,
    "fields": [*V1["fields"], {"name": "note", "type": ["null", "string"], "default": None}],
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, str, str]]:
    """(broker, console URL, registry URL)."""
    data = tmp_path_factory.mktemp("console-schemas") / "data"
    with console_broker(data, {"registry.listen": "127.0.0.1:0"}) as proc:
        yield proc, console_address(proc), registry_url(proc)


def order_message_class() -> Any:
    fdp = descriptor_pb2.FileDescriptorProto(name="ticket.proto", package="shop", syntax="proto3")
    message = fdp.message_type.add(name="Ticket")
    message.field.add(
        name="seat",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Ticket"))


def test_the_subjects_page_shows_versions_compatibility_and_a_diff(
    served: tuple[BrokerProcess, str, str], page: Any
) -> None:
    _, console, registry = served
    subject = f"orders-{uuid.uuid4().hex[:6]}-value"
    for schema in (V1, V2):
        body = {"schema": json.dumps(schema)}
        assert call(registry, "POST", f"/subjects/{subject}/versions", body).status == 200
    assert call(registry, "PUT", f"/config/{subject}", {"compatibility": "FULL"}).status == 200
    status, listed = api(console, "/api/subjects")
    assert status == 200 and listed["registry"] is True
    row = next(s for s in listed["subjects"] if s["subject"] == subject)
    assert (row["version"], row["type"], row["compatibility"]) == (2, "AVRO", "FULL")
    status, diff = api(console, f"/api/subjects/{subject}/diff?from=1&to=2")
    assert status == 200 and any(line.startswith("+") and '"note"' in line for line in diff["diff"])
    assert api(console, "/api/subjects/nobody-value")[0] == 404

    page.goto(console + "#/subjects")
    expect(page.locator("#subjects")).to_contain_text(subject)
    page.locator("#subjects a", has_text=subject).click()
    expect(page.locator("#subject-name")).to_have_text(subject)
    expect(page.locator("#subject-stats")).to_contain_text("compatibility FULL")
    expect(page.locator("#versions tbody tr")).to_have_count(2)
    expect(page.locator("#schema-text")).to_contain_text('"note"')
    added = page.locator("#diff .diff-line.add")
    expect(added.first).to_be_visible()
    expect(page.locator("#diff")).to_contain_text('"name": "note"')
    snap(page, "subject-diff")
    # The same version on both sides: nothing differs.
    page.select_option("#diff-from", "2")
    expect(page.locator("#diff")).to_contain_text("versions 2 and 2 are the same")


def test_the_message_browser_decodes_records_with_their_schemas(
    served: tuple[BrokerProcess, str, str], page: Any
) -> None:
    proc, console, registry = served
    topic = f"tickets-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": proc.bootstrap})  # kept until the answer
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    client = SchemaRegistryClient({"url": registry})
    ctx = SerializationContext(topic, MessageField.VALUE)
    avro = AvroSerializer(client, json.dumps(V2))({"id": 7, "item": "pen", "note": "blue ink"}, ctx)
    ticket = order_message_class()(seat="12F")
    proto = ProtobufSerializer(
        type(ticket),
        client,
        {"use.deprecated.format": False, "subject.name.strategy": lambda c, n: f"{topic}-tickets"},
    )(ticket, ctx)
    producer = Producer({"bootstrap.servers": proc.bootstrap})
    for value in (avro, proto, b"plain text"):
        producer.produce(topic, value)
    assert producer.flush(30) == 0

    status, found = api(console, f"/api/topics/{topic}/messages?from=oldest")
    assert status == 200
    rows = {r["offset"]: r for r in found["records"]}
    decoded = rows[0]["value_schema"]
    assert decoded["type"] == "AVRO" and json.loads(decoded["json"]) == {
        "id": 7,
        "item": "pen",
        "note": "blue ink",
    }
    assert rows[0]["value"]["encoding"] == "hex", "the raw bytes are still shown"
    assert json.loads(rows[1]["value_schema"]["json"]) == {"seat": "12F"}
    assert rows[1]["value_schema"]["subject"] == f"{topic}-tickets"
    assert "value_schema" not in rows[2]

    page.goto(console + f"#/topics/{topic}/messages?from=oldest")
    first = page.locator("#messages tr[data-offset='0']")
    expect(first.locator(".decoded-json")).to_contain_text('"item": "pen"')
    expect(first.locator(".schema-ref")).to_contain_text("AVRO")
    expect(page.locator("#messages tr[data-offset='1'] .decoded-json")).to_contain_text("12F")
    expect(page.locator("#messages tr[data-offset='2'] .decoded")).to_have_count(0)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(Kafka address, console URL, registry URL) of a broker with users and ACLs."""
    port = free_port()
    settings = {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "console.listen": "127.0.0.1:0",
        "registry.listen": "127.0.0.1:0",
        "registry.login.listener": "SASL_PLAINTEXT",
        **security_settings("SASL_PLAINTEXT"),
    }
    proc = BrokerProcess(
        tmp_path_factory.mktemp("console-schemas-acl") / "data", settings, port=None
    )
    proc.start(timeout=90)
    try:
        yield f"127.0.0.1:{port}", console_url(proc), registry_url(proc)
    finally:
        proc.stop()
        proc.kill()


def test_users_see_the_subjects_and_schemas_their_acls_allow(secured: tuple[str, str, str]) -> None:
    address, console, registry = secured
    admin_user = ("admin", PASSWORDS["admin"])
    admin = AdminClient(kafka_conf(address, "admin"))
    for name in ("open", "closed"):
        admin.create_topics([NewTopic(name, 1, 1)])[name].result(60)
        body = {"schema": json.dumps({**V1, "name": name.title()})}
        answer = call(registry, "POST", f"/subjects/{name}-value/versions", body, user=admin_user)
        assert answer.status == 200, answer.body
    grant(address, "alice", "open", AclOperation.READ)
    client = SchemaRegistryClient(
        {"url": registry, "basic.auth.user.info": f"admin:{PASSWORDS['admin']}"}
    )
    producer = Producer(kafka_conf(address, "admin"))
    for name in ("open", "closed"):
        serialize = AvroSerializer(client, json.dumps({**V1, "name": name.title()}))
        value = serialize({"id": 1, "item": name}, SerializationContext(name, MessageField.VALUE))
        producer.produce(name, value)
    assert producer.flush(30) == 0

    anonymous = Console(console)  # no login: the subject pages are closed to it
    for path in ("/api/subjects", "/api/subjects/open-value", "/api/subjects/closed-value"):
        assert anonymous.get(path).status == 401, path

    alice = Console(console).login("alice")
    listed = alice.get("/api/subjects")
    assert listed.status == 200
    assert [s["subject"] for s in listed.body["subjects"]] == ["open-value"]
    assert alice.get("/api/subjects/closed-value").status == 403
    assert alice.get("/api/subjects/open-value").status == 200
    records = alice.get("/api/topics/open/messages?from=oldest").body["records"]
    assert json.loads(records[0]["value_schema"]["json"])["item"] == "open"

    admin_console = Console(console).login("admin")
    names = [s["subject"] for s in admin_console.get("/api/subjects").body["subjects"]]
    assert names == ["closed-value", "open-value"]
