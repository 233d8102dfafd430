"""The REST API: Confluent's paths, JSON shapes, statuses and error codes."""

from __future__ import annotations

import base64
import json

from google.protobuf import descriptor_pb2, timestamp_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.registry.harness import Registry

from samsa.registry.api import CONTENT_TYPE, RegistryApi, Request
from samsa.registry.store import RegistryState

USER = {"type": "record", "name": "User", "fields": [{"name": "id", "type": "long"}]}
USER2 = {**USER, "fields": [*USER["fields"], {"name": "n", "type": "string", "default": ""}]}


def test_register_read_and_lookup() -> None:
    r = Registry()
    first = r.register("user-value", USER)
    assert (first.status, first.content_type, first.json()) == (200, CONTENT_TYPE, {"id": 1})
    assert r.register("user-value", USER).json() == {"id": 1}  # same schema: no new version
    assert len(r.log) == 1
    assert r.register("other", USER).json() == {"id": 1}  # same schema elsewhere: same id
    assert r.register("user-value", USER2).json() == {"id": 2}
    assert r.call("GET", "/subjects").json() == ["other", "user-value"]
    assert r.call("GET", "/subjects/user-value/versions").json() == [1, 2]
    latest = r.call("GET", "/subjects/user-value/versions/latest").json()
    assert latest == {
        "subject": "user-value",
        "version": 2,
        "id": 2,
        "schema": json.dumps(USER2, separators=(",", ":")),
    }
    assert r.call("GET", "/subjects/user-value/versions/-1").json()["version"] == 2
    assert r.call("GET", "/subjects/user-value/versions/1/schema").json() == USER
    assert r.call("GET", "/schemas/ids/1").json() == {
        "schema": json.dumps(USER, separators=(",", ":"))
    }
    assert r.call("GET", "/schemas/ids/1/schema").json() == USER
    assert r.call("GET", "/schemas/ids/1/subjects").json() == ["other", "user-value"]
    assert r.call("GET", "/schemas/ids/1/versions").json() == [
        {"subject": "other", "version": 1},
        {"subject": "user-value", "version": 1},
    ]
    # Lookup ignores formatting: the canonical forms are compared.
    spaced = {"schema": json.dumps(USER, indent=2)}
    found = r.call("POST", "/subjects/user-value", spaced).json()
    assert (found["id"], found["version"]) == (1, 1)
    assert r.call("GET", "/schemas/types").json() == ["JSON", "PROTOBUF", "AVRO"]
    assert len(r.call("GET", "/schemas").json()) == 3
    assert r.replay().subject_names() == r.state.subject_names()


def test_not_found_and_invalid_inputs_answer_confluents_codes() -> None:
    r = Registry()
    r.register("s", USER)
    cases = [
        (("GET", "/subjects/nope/versions"), 404, 40401),
        (("GET", "/subjects/s/versions/9"), 404, 40402),
        (("GET", "/schemas/ids/99"), 404, 40403),
        (("POST", "/subjects/s", {"schema": '"int"'}), 404, 40403),
        (("POST", "/subjects/nope", {"schema": '"int"'}), 404, 40401),
        (("GET", "/subjects/s/versions/0"), 422, 42202),
        (("GET", "/subjects/s/versions/abc"), 422, 42202),
        (("POST", "/subjects/s/versions", {"schema": '{"type": "nope"}'}), 422, 42201),
        (("POST", "/subjects/s/versions", {"schema": "not json"}), 422, 42201),
        (("POST", "/subjects/s/versions", {"schema": '"int"', "schemaType": "XML"}), 422, 42201),
        (("PUT", "/config", {"compatibility": "SIDEWAYS"}), 422, 42203),
        (("PUT", "/mode", {"mode": "WRONG"}), 422, 42204),
        (("GET", "/config/s"), 404, 40408),
        (("GET", "/mode/s"), 404, 40409),
        (("GET", "/nothing/here"), 404, 404),
        (("PATCH", "/subjects"), 405, 405),
    ]
    for args, status, code in cases:
        answer = r.call(*args)
        assert (answer.status, answer.json()["error_code"]) == (status, code), (args, answer.json())
    assert r.call("GET", "/subjects/nope/versions").json()["message"] == "Subject 'nope' not found."
    bad_body = r.call("POST", "/subjects/s/versions", b"{not json")
    assert bad_body.status == 400
    wrong_type = r.call(
        "POST", "/subjects/s/versions", {"schema": '"int"'}, {"content-type": "text/xml"}
    )
    assert wrong_type.status == 415


def test_soft_and_permanent_deletes() -> None:
    r = Registry()
    r.register("s", USER)
    r.register("s", USER2)
    assert r.call("DELETE", "/subjects/s/versions/2", permanent=True).json()["error_code"] == 40407
    assert r.call("DELETE", "/subjects/s/versions/2").json() == 2
    assert r.call("DELETE", "/subjects/s/versions/2").json()["error_code"] == 40406
    assert r.call("GET", "/subjects/s/versions").json() == [1]
    assert r.call("GET", "/subjects/s/versions", deleted=True).json() == [1, 2]
    assert r.call("GET", "/subjects/s/versions/2").json()["error_code"] == 40402
    assert r.call("GET", "/subjects/s/versions/2", deleted=True).json()["id"] == 2
    assert r.call("GET", "/schemas/ids/2").status == 200  # soft-deleted: id still readable
    assert r.call("DELETE", "/subjects/s", permanent=True).json()["error_code"] == 40405
    assert r.call("DELETE", "/subjects/s").json() == [1]
    assert r.call("DELETE", "/subjects/s").json()["error_code"] == 40404
    assert r.call("GET", "/subjects").json() == []
    assert r.call("GET", "/subjects", deleted=True).json() == ["s"]
    assert r.call("DELETE", "/subjects/s", permanent=True).json() == [1, 2]
    assert r.call("GET", "/subjects", deleted=True).json() == []
    assert r.call("GET", "/schemas/ids/1").json()["error_code"] == 40403
    # Ids are never reused: the next schema gets 3, on this node and a replaying one.
    assert r.register("s", {"type": "fixed", "name": "F", "size": 2}).json() == {"id": 3}
    assert r.replay().next_id() == 4
    assert r.call("GET", "/subjects/s/versions").json() == [1]  # versions restart when gone


def test_reregistering_a_soft_deleted_schema_tombstones_the_old_version() -> None:
    r = Registry()
    r.register("s", USER)
    r.call("DELETE", "/subjects/s/versions/1")
    assert r.register("s", USER).json() == {"id": 1}
    assert r.call("GET", "/subjects/s/versions", deleted=True).json() == [2]


def test_config_mode_and_default_to_global() -> None:
    r = Registry()
    assert r.call("GET", "/config").json() == {"compatibilityLevel": "BACKWARD"}
    assert r.call("PUT", "/config", {"compatibility": "full"}).json() == {"compatibility": "FULL"}
    assert r.call("GET", "/config").json() == {"compatibilityLevel": "FULL"}
    r.register("s", USER)
    assert r.call("GET", "/config/s", defaultToGlobal=True).json() == {"compatibilityLevel": "FULL"}
    r.call("PUT", "/config/s", {"compatibility": "NONE"})
    assert r.call("GET", "/config/s").json() == {"compatibilityLevel": "NONE"}
    assert r.call("DELETE", "/config/s").json() == {"compatibilityLevel": "NONE"}
    assert r.call("GET", "/config/s").json()["error_code"] == 40408
    assert r.call("PUT", "/mode/s", {"mode": "READONLY"}).json() == {"mode": "READONLY"}
    refused = r.register("s", USER2)
    assert (refused.status, refused.json()["error_code"]) == (422, 42205)
    assert r.call("DELETE", "/mode/s").json() == {"mode": "READONLY"}
    assert r.call("PUT", "/mode", {"mode": "IMPORT"}).json()["error_code"] == 42205
    assert r.call("PUT", "/mode", {"mode": "IMPORT"}, force=True).json() == {"mode": "IMPORT"}
    imported = r.register("t", USER2, id=42, version=5)
    assert imported.json() == {"id": 42}
    assert r.call("GET", "/subjects/t/versions").json() == [5]
    r.call("PUT", "/mode", {"mode": "READWRITE"})
    assert r.register("u", {"type": "fixed", "name": "G", "size": 1}).json() == {"id": 43}


def test_compatibility_endpoint_and_verbose_messages() -> None:
    r = Registry()
    r.register("s", USER)
    breaking = {"schema": json.dumps({**USER, "fields": [{"name": "x", "type": "int"}]})}
    path = "/compatibility/subjects/s/versions/latest"
    assert r.call("POST", path, breaking).json() == {"is_compatible": False}
    verbose = r.call("POST", path, breaking, verbose=True).json()
    assert verbose["is_compatible"] is False and verbose["messages"]
    assert r.call("POST", path, {"schema": json.dumps(USER2)}).json() == {"is_compatible": True}
    assert (
        r.call("POST", "/compatibility/subjects/s/versions/7", breaking).json()["error_code"]
        == 40402
    )
    assert not r.api.is_write(Request("POST", path))


def test_references_and_referencedby() -> None:
    r = Registry()
    address = {
        "type": "record",
        "name": "Address",
        "namespace": "acme",
        "fields": [{"name": "city", "type": "string"}],
    }
    r.register("address", address)
    person = {"type": "record", "name": "Person", "namespace": "acme",
              "fields": [{"name": "home", "type": "acme.Address"}]}  # fmt: skip
    refs = [{"name": "acme.Address", "subject": "address", "version": 1}]
    assert r.register("person", person).json()["error_code"] == 42201  # unresolved type
    assert r.register("person", person, references=refs).json() == {"id": 2}
    assert r.call("GET", "/subjects/person/versions/1").json()["references"] == refs
    assert r.call("GET", "/subjects/address/versions/1/referencedby").json() == [2]
    assert r.call("DELETE", "/subjects/address/versions/1").json()["error_code"] == 42206


def test_normalize_makes_equivalent_spellings_one_schema() -> None:
    r = Registry()
    a = {"type": "record", "name": "R", "namespace": "x", "fields": [{"name": "f", "type": "int"}]}
    b = {"type": "record", "name": "x.R", "fields": [{"name": "f", "type": "int"}]}
    first = r.register("s", a, normalize=True).json()
    assert r.register("s", b, normalize=True).json() == first
    assert r.call("GET", "/subjects/s/versions").json() == [1]


def test_protobuf_as_confluent_kafka_sends_it() -> None:
    # confluent-kafka's ProtobufSerializer registers the base64 FileDescriptorProto of
    # the message's file and its imports as references (well-known ones need none).
    fdp = descriptor_pb2.FileDescriptorProto(name="event.proto", package="acme", syntax="proto3")
    fdp.dependency.append("google/protobuf/timestamp.proto")
    msg = fdp.message_type.add(name="Event")
    msg.field.add(name="at", number=1, type=11, label=1, type_name=".google.protobuf.Timestamp")
    msg.field.add(name="name", number=2, type=9, label=1)
    encoded = base64.b64encode(fdp.SerializeToString()).decode()
    r = Registry()
    assert r.register("event-value", encoded, "PROTOBUF").json() == {"id": 1}
    text = r.call("GET", "/schemas/ids/1").json()
    assert text["schemaType"] == "PROTOBUF" and "message Event" in text["schema"]
    assert r.register("event-value", text["schema"], "PROTOBUF").json() == {"id": 1}
    serialized = r.call("GET", "/schemas/ids/1", format="serialized").json()["schema"]
    back = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert [f.name for f in back.message_type[0].field] == ["at", "name"]
    assert back.dependency == [timestamp_pb2.DESCRIPTOR.name]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
    st.sampled_from(["/subjects/s/versions", "/subjects/s", "/config/s", "/mode", "/compatibility/subjects/s/versions/1", "/subjects/s/versions/latest"]),
    st.one_of(st.binary(max_size=60), st.builds(lambda s, t: json.dumps({"schema": s, "schemaType": t}).encode(),
              st.text(max_size=60), st.sampled_from(["AVRO", "JSON", "PROTOBUF"]))),
)  # fmt: skip
def test_any_request_gets_an_answer_not_an_exception(method: str, path: str, body: bytes) -> None:
    api = RegistryApi(RegistryState())
    result = api.handle(Request(method, path, {}, {}, body))
    if hasattr(result, "status"):
        assert result.status in (200, 400, 404, 405, 409, 415, 422)
