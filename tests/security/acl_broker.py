"""A real broker with authorization on: a SASL_PLAINTEXT listener with PLAIN
users, ``admin`` the super user, and clients' settings per user."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from samsa.net.channel import ChannelSecurity
from samsa.net.channels import ChannelPool
from samsa.testing import BrokerProcess

USERS = {"admin": "admin-pw", "alice": "alice-pw", "bob": "bob-pw"}
STARTUP_TIMEOUT_S = 90.0
"""Samsa starts in about a second; a loaded machine can take far longer."""
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


DESCRIBE_ALL_ACLS = {
    "resource_type_filter": 1,
    "resource_name_filter": None,
    "pattern_type_filter": 1,
    "principal_filter": None,
    "host_filter": None,
    "operation": 1,
    "permission_type": 1,
}
"""A DescribeAcls request body matching every ACL (ANY everywhere)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def plain_jaas(login: str | None = None) -> str:
    users = " ".join(f'user_{name}="{password}"' for name, password in USERS.items())
    own = f'username="{login}" password="{USERS[login]}" ' if login else ""
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required {own}{users};"


@dataclass
class AclBroker:
    broker: BrokerProcess
    port: int

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def conf(self, user: str, **extra: Any) -> dict[str, Any]:
        """confluent-kafka settings logging in as ``user``."""
        return {
            "bootstrap.servers": self.address,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": USERS[user],
            **extra,
        }

    def call(self, user: str, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """One request as ``user``, its decoded response: the exact error codes
        that real clients turn into retries or exceptions."""
        return call(self.port, user, api_key, version, body)


def call(port: int, user: str, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        security = ChannelSecurity(None, "PLAIN", user, USERS[user])
        pool = ChannelPool(client_id=f"acl-test-{user}", security=security)
        try:
            channel = pool.to_address("127.0.0.1", port)
            return await channel.request(api_key, version, body, timeout_ms=15000)
        finally:
            await pool.close()

    return asyncio.run(run())


def start_acl_broker(data_dir: Path, extra: dict[str, str] | None = None) -> AclBroker:
    port = free_port()
    settings = {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port},PLAINTEXT://127.0.0.1:0",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.jaas.config": plain_jaas(),
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:admin",
        "connection.failed.authentication.delay.ms": "0",
        **(extra or {}),
    }
    broker = BrokerProcess(data_dir, settings, port=None)
    broker.start(timeout=STARTUP_TIMEOUT_S)
    return AclBroker(broker, port)


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclBroker]:
    """One broker with authorization on, shared by a test module."""
    broker = start_acl_broker(tmp_path_factory.mktemp("acl") / "data")
    try:
        yield broker
    finally:
        broker.broker.stop()
        broker.broker.kill()
