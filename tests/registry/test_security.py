"""The registry on a broker with SASL users, an ACL authorizer and TLS on the registry.

Users (PLAIN): ``admin`` (super user; also the login the broker's own client uses on its
SASL inter-broker listener), ``alice`` (READ on topic ``orders``, WRITE on topics
prefixed ``alice-``), ``bob`` (nothing).  HTTP Basic against those users, per-subject
ACLs mapped onto topics, listings filtered, Host names checked, HTTPS with a private CA;
and an open registry beside an authorizer refused at start.
"""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from tests.registry.served import avro_record, call, registry_url
from tests.security.certs import CertificateAuthority

from samsa.cli.main import main
from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

PASSWORDS = {"admin": "admin-pw", "alice": "alice-pw", "bob": "bob-pw"}
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ORDER = avro_record("Order", ("id", "string"))


def plain_jaas(login: str) -> str:
    users = " ".join(f'user_{name}="{password}"' for name, password in PASSWORDS.items())
    return (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{login}" password="{PASSWORDS[login]}" {users};'
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Secured:
    broker: BrokerProcess
    bootstrap: str
    url: str
    ca: Path
    context: ssl.SSLContext

    def call(
        self, method: str, path: str, body: object = None, user: str | None = None, **kw: object
    ):  # type: ignore[no-untyped-def]
        who = (user, PASSWORDS[user]) if user else None
        return call(self.url, method, path, body, user=who, context=self.context, **kw)  # type: ignore[arg-type]

    def admin(self) -> AdminClient:
        return AdminClient(
            {
                "bootstrap.servers": self.bootstrap,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "admin",
                "sasl.password": PASSWORDS["admin"],
            }
        )


def base_settings(port: int) -> dict[str, str]:
    return {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.jaas.config": plain_jaas("admin"),
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:admin",
        "connection.failed.authentication.delay.ms": "0",
    }


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    directory = tmp_path_factory.mktemp("registry-secured")
    authority = CertificateAuthority()
    ca = directory / "ca.crt"
    ca.write_text(authority.pem.cert)
    _, _, keystore = authority.issue("registry").write(directory, "registry")
    port = free_port()
    settings = {
        **base_settings(port),
        "registry.listen": "127.0.0.1:0",
        "registry.login.listener": "SASL_PLAINTEXT",
        "registry.ssl.keystore.location": str(keystore),
        "registry.ssl.truststore.location": str(ca),
    }
    proc = BrokerProcess(directory / "data", settings, port=None)
    proc.start(timeout=90)
    try:
        context = ssl.create_default_context(cafile=str(ca))
        secured = Secured(proc, f"127.0.0.1:{port}", registry_url(proc), ca, context)
        grant_alice(secured.admin())
        for subject in ("orders-value", "secret-value"):
            assert (
                secured.call(
                    "POST", f"/subjects/{subject}/versions", {"schema": ORDER}, "admin"
                ).status
                == 200
            )
        yield secured
    finally:
        proc.stop()
        proc.kill()


def grant_alice(admin: AdminClient) -> None:
    allow = AclPermissionType.ALLOW
    acls = [
        AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*",
                   AclOperation.READ, allow),
        AclBinding(ResourceType.TOPIC, "alice-", ResourcePatternType.PREFIXED, "User:alice", "*",
                   AclOperation.WRITE, allow),
    ]  # fmt: skip
    for future in admin.create_acls(acls).values():
        future.result(30)
    every = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, "User:alice", None,
        AclOperation.ANY, AclPermissionType.ANY,
    )  # fmt: skip
    assert len(admin.describe_acls(every).result(30)) == 2


def test_anonymous_gets_401(secured: Secured) -> None:
    anonymous = secured.call("GET", "/subjects")
    assert anonymous.status == 401
    assert anonymous.headers["www-authenticate"].startswith("Basic ")
    assert anonymous.json()["error_code"] == 401


def test_a_user_without_the_acl_gets_403_and_sees_nothing(secured: Secured) -> None:
    refused = secured.call("GET", "/subjects/orders-value/versions/latest", user="bob")
    assert refused.status == 403
    assert refused.json()["error_code"] == 40301
    assert "DESCRIBE on TOPIC orders" in refused.json()["message"]
    assert secured.call("GET", "/subjects", user="bob").json() == []
    assert secured.call("GET", "/schemas", user="bob").json() == []
    assert secured.call("GET", "/schemas/types", user="bob").status == 200


def test_a_user_with_the_acl_gets_200_within_its_topics(secured: Secured) -> None:
    got = secured.call("GET", "/subjects/orders-value/versions/latest", user="alice")
    assert got.status == 200 and got.json()["subject"] == "orders-value"
    assert secured.call("GET", "/subjects", user="alice").json() == ["orders-value"]
    schema_id = got.json()["id"]  # also held by secret-value: readable through orders-value
    assert secured.call("GET", f"/schemas/ids/{schema_id}", user="alice").status == 200
    assert secured.call("GET", f"/schemas/ids/{schema_id}/subjects", user="alice").json() == [
        "orders-value"
    ]
    # READ is no WRITE: registering under orders-value needs WRITE on orders
    other = avro_record("Other", ("x", "int"))
    refused = secured.call("POST", "/subjects/orders-value/versions", {"schema": other}, "alice")
    assert refused.status == 403 and "WRITE on TOPIC orders" in refused.json()["message"]
    mine = secured.call("POST", "/subjects/alice-topic-value/versions", {"schema": other}, "alice")
    assert mine.status == 200
    assert secured.call("DELETE", "/subjects/alice-topic-value", user="alice").status == 403
    assert secured.call("PUT", "/config", {"compatibility": "NONE"}, "alice").status == 403
    assert secured.call("PUT", "/config", {"compatibility": "BACKWARD"}, "admin").status == 200


def test_a_wrong_host_gets_421(secured: Secured) -> None:
    wrong = secured.call("GET", "/subjects", user="admin", headers={"Host": "evil.example"})
    assert wrong.status == 421
    assert "registry.allowed.hosts" in wrong.json()["message"]


def test_plain_http_to_the_tls_registry_gets_no_answer(secured: Secured) -> None:
    with pytest.raises((ConnectionError, OSError)):
        call(secured.url.replace("https://", "http://"), "GET", "/subjects", timeout=5)


def test_confluent_client_with_basic_auth_over_tls(secured: Secured) -> None:
    client = SchemaRegistryClient(
        {
            "url": secured.url,
            "basic.auth.user.info": f"alice:{PASSWORDS['alice']}",
            "ssl.ca.location": str(secured.ca),
        }
    )
    schema_id = client.register_schema("alice-orders-value", Schema(ORDER, "AVRO"))
    assert client.get_schema(schema_id).schema_str
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("secret-value", Schema(avro_record("S", ("s", "int")), "AVRO"))
    assert refused.value.http_status_code == 403


def test_cli_takes_credentials_from_command_config(
    secured: Secured, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    props = tmp_path / "registry.properties"
    props.write_text(
        "basic.auth.credentials.source=USER_INFO\n"
        f"basic.auth.user.info=alice:{PASSWORDS['alice']}\n"
        f"schema.registry.ssl.ca.location={secured.ca}\n"
    )
    code = main(["schemas", "list", "--registry-url", secured.url, "--command-config", str(props),
                 "--output", "json"])  # fmt: skip
    assert code == 0 and "orders-value" in json.loads(capsys.readouterr().out)
    code = main(["schemas", "list", "--registry-url", secured.url, "--command-config", str(props),
                 "secret-value"])  # fmt: skip
    assert code == 2 and "40301" in capsys.readouterr().err


def test_a_wrong_password_gets_401_then_the_address_backs_off(secured: Secured) -> None:
    """Last in the module: failed logins slow the next ones from the same address down."""
    wrong = call(secured.url, "GET", "/subjects", user=("alice", "nope"), context=secured.context)
    assert wrong.status == 401
    again = call(secured.url, "GET", "/subjects", user=("bob", "guess"), context=secured.context)
    assert again.status == 429 and int(again.headers["retry-after"]) >= 1
    # a login checked before is remembered (no password check, so no back-off)
    assert secured.call("GET", "/subjects", user="alice").status == 200


def test_an_open_registry_beside_an_authorizer_is_refused(tmp_path: Path) -> None:
    settings = {**base_settings(free_port()), "registry.listen": "127.0.0.1:0"}
    proc = BrokerProcess(tmp_path / "data", settings, port=None)
    try:
        with pytest.raises(RuntimeError):
            proc.start(timeout=60)
        assert "registry.login.listener is required" in proc.log_text()
    finally:
        proc.kill()
