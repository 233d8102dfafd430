"""A console on brokers with SASL users and ACLs, and the checks every one must pass.

Users: ``admin`` (PLAIN, the super user), ``alice`` (PLAIN, READ on ``public``
and nothing on ``secret``), ``carol`` (SCRAM-SHA-512, from the metadata log).
Data is made with confluent-kafka as admin; what the console may show or do
is checked over its JSON API (``Console``, one session cookie each) and, after
every refused request, with confluent-kafka again: nothing written, nothing
deleted.
"""

from __future__ import annotations

import http.client
import json
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from samsa.testing import BrokerProcess

PASSWORDS = {"admin": "admin-pw", "alice": "alice-pw", "carol": "carol-pw"}
MECHANISMS = {"admin": "PLAIN", "alice": "PLAIN", "carol": "SCRAM-SHA-512"}
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SECRET_RECORDS = [(b"k0", b"the launch code"), (b"k1", b"the safe's combination"), (b"k2", b"x")]
PUBLIC_RECORDS = [(b"p0", b"hello"), (b"p1", b"world")]
GROUP = "secret-readers"
FAILED_LOGIN_DELAY_MS = 300


def plain_jaas(login: str | None = None) -> str:
    users = " ".join(f'user_{n}="{PASSWORDS[n]}"' for n in ("admin", "alice"))
    own = f'username="{login}" password="{PASSWORDS[login]}" ' if login else ""
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required {own}{users};"


def security_settings(listener: str) -> dict[str, str]:
    """What a secured node's settings add: SASL users, ACLs, the console's login."""
    prefix = f"listener.name.{listener.lower()}."
    return {
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        f"{prefix}plain.sasl.jaas.config": plain_jaas("admin"),
        f"{prefix}scram-sha-512.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="admin" password="admin-pw";'
        ),
        "scram.bootstrap.credentials": "SCRAM-SHA-512=[name=carol,password=carol-pw]",
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:admin",
        f"{prefix}connection.failed.authentication.delay.ms": str(FAILED_LOGIN_DELAY_MS),
        "console.login.listener": listener,
        "console.allow.actions": "true",
    }


def kafka_conf(address: str, name: str) -> dict[str, Any]:
    """confluent-kafka settings logging in as ``name``."""
    return {
        "bootstrap.servers": address,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": MECHANISMS[name],
        "sasl.username": name,
        "sasl.password": PASSWORDS[name],
    }


def console_url(proc: BrokerProcess) -> str:
    assert proc.wait_for_log("console listening on http://", 30)
    found = re.search(r"console listening on (http://\S+/)", proc.log_text())
    assert found is not None
    return found.group(1)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any
    seconds: float

    @property
    def error(self) -> str:
        return str(self.body.get("error", "")) if isinstance(self.body, dict) else ""


@dataclass
class Console:
    """One browser's worth of the console's API: its session cookie, its address."""

    base: str
    cookie: str = ""
    source: str = "127.0.0.1"
    """The client's address (a loopback address of its own keeps its back-off apart)."""
    extra: dict[str, str] = field(default_factory=dict)

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> Reply:
        parts = urllib.parse.urlsplit(self.base)
        conn = http.client.HTTPConnection(
            parts.hostname, parts.port, timeout=30, source_address=(self.source, 0)
        )
        sent = {**self.extra, **(headers or {})}
        if self.cookie:
            sent.setdefault("Cookie", self.cookie)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        started = time.monotonic()
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        seconds = time.monotonic() - started
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        parsed: Any = raw
        if answer_headers.get("content-type", "").startswith("application/json"):
            parsed = json.loads(raw)
        return Reply(response.status, answer_headers, parsed, seconds)

    def get(self, path: str, **headers: str) -> Reply:
        return self.call("GET", path, headers=headers)

    def post(self, path: str, body: Any, **headers: str) -> Reply:
        return self.call("POST", path, body, headers)

    def login(
        self, name: str, password: str | None = None, mechanism: str | None = None
    ) -> Console:
        body = {"username": name, "password": password or PASSWORDS[name]}
        if mechanism:
            body["mechanism"] = mechanism
        reply = self.post("/api/login", body)
        assert reply.status == 200, (reply.status, reply.body)
        cookie = reply.headers["set-cookie"].split(";")[0]
        return Console(self.base, cookie, self.source)


ACTIONS = {
    "produce": {"topic": "secret", "partition": 0, "key": "forged", "value": "forged"},
    "add-partitions": {"topic": "secret", "count": 5},
    "delete-records": {"topic": "secret", "partition": 0, "offset": 3},
    "create-topic": {"name": "forged-topic", "partitions": 1},
    "reset-offsets": {"group": GROUP, "topic": "secret", "to": "latest"},
}
READS = [
    "/api/topics",
    "/api/topics?internal=true",
    "/api/topics/secret",
    "/api/topics/secret/messages?from=oldest",
    "/api/groups",
    f"/api/groups/{GROUP}",
    "/api/share-groups",
    "/api/cluster",
    "/api/brokers",
    "/api/rates",
    "/api/whoami",
    "/api/nowhere",
]


# ---------------------------------------------------------------- Kafka side


def prepare_data(address: str, replication_factor: int = -1) -> None:
    """``secret`` (2 partitions, 3 records in partition 0), ``public`` (2
    records), the group ``secret-readers`` committed at 2 on ``secret``-0, and
    alice's READ on ``public``."""
    admin = AdminClient(kafka_conf(address, "admin"))
    for name, count in (("secret", 2), ("public", 1)):
        admin.create_topics([NewTopic(name, count, replication_factor)])[name].result(60)
    producer = Producer({**kafka_conf(address, "admin"), "acks": "all"})
    for key, value in SECRET_RECORDS:
        producer.produce("secret", value, key, partition=0)
    for key, value in PUBLIC_RECORDS:
        producer.produce("public", value, key, partition=0)
    assert producer.flush(60) == 0
    consumer = Consumer({**kafka_conf(address, "admin"), "group.id": GROUP})
    try:
        consumer.commit(offsets=[TopicPartition("secret", 0, 2)], asynchronous=False)
    finally:
        consumer.close()
    grant(address, "alice", "public", AclOperation.READ)


def _binding(name: str, topic: str, operation: Any) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        f"User:{name}",
        "*",
        operation,
        AclPermissionType.ALLOW,
    )


def grant(address: str, name: str, topic: str, operation: Any) -> None:
    acl = _binding(name, topic, operation)
    admin = AdminClient(kafka_conf(address, "admin"))  # kept until the answer comes
    admin.create_acls([acl])[acl].result(60)


def revoke(address: str, name: str, topic: str, operation: Any) -> None:
    acl = _binding(name, topic, operation)
    found = AclBindingFilter(*(getattr(acl, a) for a in _FILTER_FIELDS))
    admin = AdminClient(kafka_conf(address, "admin"))
    admin.delete_acls([found])[found].result(60)


_FILTER_FIELDS = (
    "restype",
    "name",
    "resource_pattern_type",
    "principal",
    "host",
    "operation",
    "permission_type",
)


@dataclass(frozen=True)
class KafkaState:
    """What the refused requests must not change, as confluent-kafka reads it."""

    topics: frozenset[str]
    secret_partitions: int
    watermarks: tuple[int, int]
    committed: int


def kafka_state(address: str) -> KafkaState:
    admin = AdminClient(kafka_conf(address, "admin"))
    metadata = admin.list_topics(timeout=30)
    consumer = Consumer({**kafka_conf(address, "admin"), "group.id": GROUP})
    try:
        watermarks = consumer.get_watermark_offsets(TopicPartition("secret", 0), timeout=30)
        committed = consumer.committed([TopicPartition("secret", 0)], timeout=30)[0].offset
    finally:
        consumer.close()
    return KafkaState(
        # (admin's own actions make topics named admin-...)
        frozenset(t for t in metadata.topics if not t.startswith(("__", "admin-"))),
        len(metadata.topics["secret"].partitions),
        tuple(watermarks),
        committed,
    )


def wait_for(probe: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll an observable (an API answer) until it holds, bounded."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.1)


def topic_names(console: Console) -> list[str]:
    reply = console.get("/api/topics?internal=true")
    assert reply.status == 200, reply.body
    return [t["name"] for t in reply.body["topics"]]


# ---------------------------------------------------------------- the checks


def check_anonymous(anonymous: Console) -> None:
    """401 everywhere but the login page and its files."""
    for path in READS:
        reply = anonymous.get(path)
        assert reply.status == 401, (path, reply.status, reply.body)
        assert "log in" in reply.error
    for name, body in ACTIONS.items():
        reply = anonymous.post(f"/api/actions/{name}", body)
        assert reply.status == 401, (name, reply.status, reply.body)
    for path in ("/", "/static/app.js", "/static/login.js", "/static/style.css", "/api/login"):
        assert anonymous.get(path).status == 200, path
    assert anonymous.get("/api/login").body["mechanisms"] == ["PLAIN", "SCRAM-SHA-512"]


def refused(reply: Reply, needs: str) -> None:
    assert reply.status == 403, (reply.status, reply.body)
    assert needs in reply.error, reply.error


def check_alice_without_acls(alice: Console) -> None:
    """``secret`` is absent from her lists; its page, records and actions are 403."""
    assert topic_names(alice) == ["public"]
    refused(alice.get("/api/topics/secret"), "DESCRIBE on TOPIC secret")
    refused(alice.get("/api/topics/no-such-topic"), "DESCRIBE on TOPIC no-such-topic")
    refused(alice.get("/api/topics/secret/messages?from=oldest"), "READ on TOPIC secret")
    assert [g["group"] for g in alice.get("/api/groups").body["groups"]] == []
    refused(alice.get(f"/api/groups/{GROUP}"), f"DESCRIBE on GROUP {GROUP}")
    refused(alice.get("/api/cluster"), "DESCRIBE on CLUSTER kafka-cluster")
    check_actions_refused(alice)
    brokers = alice.get("/api/brokers")
    assert brokers.status == 200
    public = alice.get("/api/topics/public")
    assert public.status == 200 and public.body["configs"] == []  # no DESCRIBE_CONFIGS


def check_actions_refused(user: Console) -> None:
    """Every action on ``secret`` refused, naming what the Kafka request needs."""
    refused(user.post("/api/actions/produce", ACTIONS["produce"]), "WRITE on TOPIC secret")
    refused(
        user.post("/api/actions/add-partitions", ACTIONS["add-partitions"]), "ALTER on TOPIC secret"
    )
    refused(
        user.post("/api/actions/delete-records", ACTIONS["delete-records"]),
        "DELETE on TOPIC secret",
    )
    refused(
        user.post("/api/actions/create-topic", ACTIONS["create-topic"]),
        "CREATE on TOPIC forged-topic",
    )
    refused(
        user.post("/api/actions/reset-offsets", ACTIONS["reset-offsets"]), f"READ on GROUP {GROUP}"
    )
