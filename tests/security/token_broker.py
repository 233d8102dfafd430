"""A real broker with delegation tokens on: SCRAM users, an authorizer, a secret key.

Listeners: PLAINTEXT (where token requests are refused, as Kafka refuses
them) and SASL_PLAINTEXT with SCRAM-SHA-256/512 for users and tokens alike.
``admin`` is the super user; the others get ACLs from the tests.  Clients'
settings come from here for a user (``user_conf``) or a token
(``token_conf``), for the Samsa client, librdkafka and Kafka's Java tools.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samsa.client.admin import Admin, DelegationToken
from samsa.protocol.acl import AclBinding, AclOperation, PatternType, Permission, ResourceType
from samsa.testing import BrokerProcess
from samsa.testing.cluster import free_ports

USERS = {"admin": "admin-pw", "alice": "alice-pw", "bob": "bob-pw", "carol": "carol-pw"}
SECRET = "token-secret-key"
STARTUP_TIMEOUT_S = 90.0
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required"


def scram_jaas(username: str, password: str, *, token: bool = False) -> str:
    tokenauth = ' tokenauth="true"' if token else ""
    return f'{SCRAM_LOGIN} username="{username}" password="{password}"{tokenauth};'


def broker_jaas() -> str:
    users = " ".join(f'user_{name}="{password}"' for name, password in USERS.items())
    return f"{SCRAM_LOGIN} {users};"


@dataclass
class TokenBroker:
    broker: BrokerProcess
    plain_port: int
    sasl_port: int

    @property
    def sasl_address(self) -> str:
        return f"127.0.0.1:{self.sasl_port}"

    @property
    def plain_address(self) -> str:
        return f"127.0.0.1:{self.plain_port}"

    def user_conf(self, user: str, mechanism: str = "SCRAM-SHA-256") -> dict[str, Any]:
        """Samsa client settings logging in as ``user``."""
        return _samsa_conf(self.sasl_address, mechanism, scram_jaas(user, USERS[user]))

    def token_conf(
        self, token: DelegationToken, mechanism: str = "SCRAM-SHA-256"
    ) -> dict[str, Any]:
        """Samsa client settings logging in by ``token`` (Kafka's JAAS line)."""
        return _samsa_conf(self.sasl_address, mechanism, token.jaas_config())

    def admin(self, user: str) -> Admin:
        return Admin(self.user_conf(user))

    def allow(
        self, principal: str, resource: ResourceType, name: str, *operations: AclOperation
    ) -> None:
        """ALLOW ACLs on a prefix (a topic or group) or a literal name (a USER)."""
        pattern = PatternType.LITERAL if resource is ResourceType.USER else PatternType.PREFIXED
        with self.admin("admin") as admin:
            admin.create_acls(
                AclBinding(resource, name, pattern, principal, "*", op, Permission.ALLOW)
                for op in operations
            )


def _samsa_conf(bootstrap: str, mechanism: str, jaas: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": jaas,
    }


def token_settings(plain_port: int, sasl_port: int, **extra: str) -> dict[str, str]:
    return {
        "listeners": f"PLAINTEXT://127.0.0.1:{plain_port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
        "sasl.jaas.config": broker_jaas(),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin",
        "delegation.token.secret.key": SECRET,
        "connection.failed.authentication.delay.ms": "100",
        **extra,
    }


@contextlib.contextmanager
def running_token_broker(data_dir: Path, **extra: str) -> Iterator[TokenBroker]:
    plain_port, sasl_port = free_ports(2)
    broker = BrokerProcess(data_dir, token_settings(plain_port, sasl_port, **extra), port=None)
    broker.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield TokenBroker(broker, plain_port, sasl_port)
    finally:
        broker.stop()
        broker.kill()
