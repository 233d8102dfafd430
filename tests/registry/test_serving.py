"""The registry served by a real broker, over HTTP: Confluent's statuses, error codes and
content types, the compatibility table refused with 409, and ``samsa schemas``."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from tests.registry import test_compat_avro, test_compat_jsonschema, test_compat_protobuf
from tests.registry.conftest import Served
from tests.registry.served import CONTENT_TYPE, avro_record, call

from samsa.cli.main import main

pytestmark = pytest.mark.integration

USER = avro_record("User", ("name", "string"))
USER_STORED = json.dumps(json.loads(USER), separators=(",", ":"))  # Confluent's canonical text


def test_answers_in_confluents_shapes_and_content_type(served: Served) -> None:
    url = served.url
    registered = call(url, "POST", "/subjects/shapes-value/versions", {"schema": USER})
    assert registered.status == 200 and registered.json() == {"id": registered.json()["id"]}
    assert registered.headers["content-type"] == CONTENT_TYPE
    schema_id = registered.json()["id"]
    assert call(url, "GET", f"/schemas/ids/{schema_id}").json() == {"schema": USER_STORED}
    latest = call(url, "GET", "/subjects/shapes-value/versions/latest").json()
    assert latest == {
        "subject": "shapes-value",
        "version": 1,
        "id": schema_id,
        "schema": USER_STORED,
    }
    assert call(url, "GET", "/schemas/types").json() == ["JSON", "PROTOBUF", "AVRO"]
    missing = call(url, "GET", "/subjects/nope-value/versions")
    assert (missing.status, missing.json()["error_code"]) == (404, 40401)
    bad_version = call(url, "GET", "/subjects/shapes-value/versions/zero")
    assert (bad_version.status, bad_version.json()["error_code"]) == (422, 42202)
    assert call(url, "GET", "/schemas/ids/999999").json()["error_code"] == 40403
    invalid = call(url, "POST", "/subjects/shapes-value/versions", {"schema": "{not json"})
    assert (invalid.status, invalid.json()["error_code"]) == (422, 42201)
    head = call(url, "HEAD", "/subjects")
    assert head.status == 200 and head.body == b"" and int(head.headers["content-length"]) > 0
    form = call(url, "POST", "/subjects/shapes-value/versions", b"schema=x",
                headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert form.status == 415


def test_a_subject_with_an_encoded_slash(served: Served) -> None:
    subject = "team/orders-value"
    path = f"/subjects/{urllib.parse.quote(subject, safe='')}/versions"
    assert call(served.url, "POST", path, {"schema": USER}).status == 200
    assert subject in call(served.url, "GET", "/subjects").json()
    assert call(served.url, "GET", f"{path}/1").json()["subject"] == subject


def test_requests_with_bodies_share_one_connection(served: Served) -> None:
    parts = urllib.parse.urlsplit(served.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        for i in range(3):
            body = json.dumps({"schema": avro_record(f"Keep{i}", ("a", "int"))})
            conn.request(
                "POST", f"/subjects/keep{i}-value/versions", body, {"Content-Type": CONTENT_TYPE}
            )
            answer = conn.getresponse()
            assert answer.status == 200 and answer.getheader("Connection") == "keep-alive"
            answer.read()
        assert conn.sock is not None  # never reconnected
    finally:
        conn.close()


def _sample() -> list[tuple[str, str, Any, Any, str, bool]]:
    """Each case of the core's tables at its first level, as (name, type, old, new, level, ok)."""
    out = []
    for module, kind in (
        (test_compat_avro, "AVRO"),
        (test_compat_jsonschema, "JSON"),
        (test_compat_protobuf, "PROTOBUF"),
    ):
        for name, old, new, outcomes in module.CASES:
            level, compatible = next(iter(outcomes.items()))
            out.append((f"{kind}: {name}", kind, old, new, level, compatible))
    return out


def _register(url: str, subject: str, kind: str, schema: Any) -> Any:
    text = schema if isinstance(schema, str) else json.dumps(schema)
    body = {"schema": text, **({"schemaType": kind} if kind != "AVRO" else {})}
    return call(url, "POST", f"/subjects/{subject}/versions", body)


def test_the_compatibility_table_is_refused_with_409_over_http(served: Served) -> None:
    """The core's per-format tables (tests/registry/test_compat_*.py), one level per case,
    through the HTTP API of a running broker: refused with 409 exactly where they say."""
    wrong = []
    for i, (name, kind, old, new, level, compatible) in enumerate(_sample()):
        subject = f"compat-{i}-value"
        assert call(served.url, "PUT", f"/config/{subject}", {"compatibility": level}).status == 200

        assert _register(served.url, subject, kind, old).status == 200, name
        answer = _register(served.url, subject, kind, new)
        expected = 200 if compatible else 409
        if answer.status != expected or (not compatible and answer.json()["error_code"] != 409):
            wrong.append((name, level, answer.status, answer.body[:200]))
    assert not wrong


def test_registry_settings_show_in_describe_configs(served: Served) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({"bootstrap.servers": served.broker.bootstrap})
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    entries = admin.describe_configs([resource])[resource].result(30)
    assert entries["registry.listen"].value == "127.0.0.1:0"
    assert entries["registry.topic"].value == "_schemas"
    assert entries["registry.ssl.key.password"].is_sensitive


# -- samsa schemas ------------------------------------------------------------------------
def samsa(served: Served, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["schemas", *args, "--registry-url", served.url])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_register_list_get_check_config_delete(
    served: Served, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    v1 = tmp_path / "order.avsc"
    v1.write_text(avro_record("Order", ("id", "string")))
    v2 = tmp_path / "order-v2.avsc"
    v2.write_text(avro_record("Order", ("id", "string"), ("qty", "int")))
    code, out, _ = samsa(served, capsys, "register", "cli-value", "--schema-file", str(v1))
    assert code == 0 and out.startswith("registered under cli-value: id ")
    first_id = int(out.rsplit(" ", 1)[1])
    code, out, _ = samsa(served, capsys, "list", "--output", "json")
    assert code == 0 and "cli-value" in json.loads(out)
    code, out, _ = samsa(served, capsys, "get", "cli-value", "--output", "json")
    assert json.loads(out)["id"] == first_id
    code, out, _ = samsa(served, capsys, "get", "--id", str(first_id))
    assert code == 0 and '"name": "Order"' in out
    # qty without a default breaks BACKWARD: check says so (exit 1), register is refused (exit 2)
    code, out, _ = samsa(served, capsys, "check", "cli-value", "--schema-file", str(v2))
    assert code == 1 and "NOT compatible" in out and "qty" in out
    code, _, err = samsa(served, capsys, "register", "cli-value", "--schema-file", str(v2))
    assert code == 2 and "error code 409" in err
    code, out, _ = samsa(served, capsys, "config", "cli-value", "--compatibility", "NONE")
    assert code == 0 and "NONE" in out
    code, out, _ = samsa(served, capsys, "register", "cli-value", "--schema-file", str(v2))
    assert code == 0
    code, out, _ = samsa(served, capsys, "list", "cli-value")
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == ["1", "2"]
    code, out, _ = samsa(served, capsys, "delete", "cli-value", "--version", "1")
    assert code == 0 and "version(s) 1" in out
    code, out, _ = samsa(served, capsys, "delete", "cli-value")
    assert code == 0 and "version(s) 2" in out
    code, out, _ = samsa(served, capsys, "delete", "cli-value", "--permanent")
    assert code == 0 and "permanently" in out
    code, _, err = samsa(served, capsys, "get", "cli-value")
    assert code == 2 and "error code 40401" in err


def test_cli_says_when_the_registry_is_unreachable(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["schemas", "list", "--registry-url", "http://127.0.0.1:9", "--timeout", "2"])
    assert code == 2
    assert "cannot reach http://127.0.0.1:9" in capsys.readouterr().err
