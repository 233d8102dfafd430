"""SCRAM users in the metadata log, managed with confluent-kafka's admin client.

One broker for the module (every listener, certificates made here), with a
first SCRAM user seeded at start-up (``scram.bootstrap.credentials``, Samsa's
``kafka-storage format --add-scram``).  Credentials are changed over the
PLAINTEXT listener and used over the SASL ones, by librdkafka.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from tests.security.secured_broker import (
    SecuredBroker,
    librdkafka_delivers,
    running_secured_broker,
)

pytestmark = pytest.mark.timeout(180)

SEED = "SCRAM-SHA-256=[name=seeded,password=seeded-secret,iterations=8192]"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    with running_secured_broker(
        tmp_path_factory.mktemp("scram"), {"scram.bootstrap.credentials": SEED}
    ) as broker:
        yield broker


def _admin(secured: SecuredBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": secured.address("PLAINTEXT")})


def _logs_in(
    secured: SecuredBroker, protocol: str, mechanism: str, user: str, password: str
) -> bool:
    conf = secured.librdkafka(protocol, mechanism, user="alice", password=password)
    return librdkafka_delivers({**conf, "sasl.username": user}, "scram-logins") == "delivered"


def _alter(admin: AdminClient, alterations: list[Any]) -> dict[str, Exception | None]:
    futures = admin.alter_user_scram_credentials(alterations)
    out: dict[str, Exception | None] = {}
    for user, future in futures.items():
        try:
            future.result(30)
            out[user] = None
        except KafkaException as exc:
            out[user] = exc
    return out


def _described(admin: AdminClient, users: list[str] | None = None) -> dict[str, Any]:
    future = admin.describe_user_scram_credentials(users)
    if users is None:
        return {user: d for user, d in future.result(30).items()}  # type: ignore[union-attr]
    return {user: f.result(30) for user, f in future.items()}  # type: ignore[union-attr]


def test_seeded_user_logs_in(secured: SecuredBroker) -> None:
    assert _logs_in(secured, "SASL_SSL", "SCRAM-SHA-256", "seeded", "seeded-secret")
    assert not _logs_in(secured, "SASL_SSL", "SCRAM-SHA-256", "seeded", "wrong")
    info = _described(_admin(secured), ["seeded"])["seeded"].scram_credential_infos
    assert [(i.mechanism, i.iterations) for i in info] == [(ScramMechanism.SCRAM_SHA_256, 8192)]


def test_added_user_logs_in_then_is_refused_once_deleted(secured: SecuredBroker) -> None:
    admin = _admin(secured)
    assert not _logs_in(secured, "SASL_PLAINTEXT", "SCRAM-SHA-512", "carol", "carol-secret")
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)
    upsert = UserScramCredentialUpsertion("carol", info, b"carol-secret")
    assert _alter(admin, [upsert]) == {"carol": None}
    assert _logs_in(secured, "SASL_PLAINTEXT", "SCRAM-SHA-512", "carol", "carol-secret")
    assert _logs_in(secured, "SASL_SSL", "SCRAM-SHA-512", "carol", "carol-secret")
    # One credential per mechanism: SCRAM-SHA-256 was never set for carol.
    assert not _logs_in(secured, "SASL_SSL", "SCRAM-SHA-256", "carol", "carol-secret")
    assert "carol" in _described(admin)

    deletion = UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_512)
    assert _alter(admin, [deletion]) == {"carol": None}
    assert not _logs_in(secured, "SASL_PLAINTEXT", "SCRAM-SHA-512", "carol", "carol-secret")
    with pytest.raises(KafkaException, match="does not exist"):
        _described(admin, ["carol"])


def test_kafkas_errors_reach_the_client(secured: SecuredBroker) -> None:
    admin = _admin(secured)
    few = UserScramCredentialUpsertion(
        "dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), b"pw"
    )
    both = [
        UserScramCredentialUpsertion("erin", ScramCredentialInfo(mechanism, 4096), b"pw")
        for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
    ]
    missing = UserScramCredentialDeletion("frank", ScramMechanism.SCRAM_SHA_256)
    results = _alter(admin, [few, *both, missing])
    assert "Too few iterations" in str(results["dave"])
    assert "cannot be altered twice" in str(results["erin"])
    assert "does not exist" in str(results["frank"])
    assert not {"dave", "erin", "frank"} & set(_described(admin))


def test_credentials_survive_a_restart(secured: SecuredBroker) -> None:
    admin = _admin(secured)
    upsert = UserScramCredentialUpsertion(
        "gina", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"gina-secret"
    )
    assert _alter(admin, [upsert]) == {"gina": None}
    secured.broker.stop()
    secured.broker.start()
    secured.find_ports()
    assert _logs_in(secured, "SASL_PLAINTEXT", "SCRAM-SHA-256", "gina", "gina-secret")
    # The seed is written once: still the 8192 iterations it was created with.
    assert (
        _described(_admin(secured), ["seeded"])["seeded"].scram_credential_infos[0].iterations
        == 8192
    )
