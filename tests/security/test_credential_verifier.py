"""The HTTP logins' check: a user's password (or token) through a listener's own
SASL server mechanisms, the client's side played in process."""

from __future__ import annotations

import time

import pytest

from samsa.errors import ConfigError
from samsa.protocol.sasl.oauthbearer import unsecured_token
from samsa.protocol.sasl.scram import make_credential
from samsa.security.principal import user
from samsa.security.sasl.credentials import server_mechanisms
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.verifier import CredentialVerifier, MechanismNotEnabled

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'user_alice="alice-pw" user_admin="admin-pw";'
)
SCRAM_JAAS = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required user_carol="carol-pw";'
)
STORED = {("dave", "SCRAM-SHA-512"): make_credential("SCRAM-SHA-512", "dave-pw")}


def verifier(*mechanisms: str) -> CredentialVerifier:
    def jaas(mechanism: str) -> tuple[str, str]:
        if mechanism == "PLAIN":
            return PLAIN_JAAS, "listener.name.sasl_plaintext.plain.sasl.jaas.config"
        if mechanism == "OAUTHBEARER":
            return (
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
                "sasl.jaas.config",
            )
        return SCRAM_JAAS, "sasl.jaas.config"

    factories = server_mechanisms(mechanisms, jaas, lambda u, m: STORED.get((u, m)))
    return CredentialVerifier(factories)


def test_plain_takes_the_jaas_users_and_their_passwords_only() -> None:
    check = verifier("PLAIN")
    verified = check.verify_password("alice", "alice-pw")
    assert (verified.principal, verified.mechanism) == (user("alice"), "PLAIN")
    for name, password in (("alice", "admin-pw"), ("mallory", "alice-pw"), ("alice", "")):
        with pytest.raises(AuthenticationFailed):
            check.verify_password(name, password)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_plays_the_client_against_the_stored_credential(mechanism: str) -> None:
    check = verifier(mechanism)
    assert check.verify_password("carol", "carol-pw", mechanism).principal == user("carol")
    with pytest.raises(AuthenticationFailed, match=mechanism):
        check.verify_password("carol", "carol-PW", mechanism)
    with pytest.raises(AuthenticationFailed):
        check.verify_password("nobody", "carol-pw", mechanism)


def test_scram_credentials_of_the_metadata_log_log_in_too() -> None:
    check = verifier("SCRAM-SHA-512")
    assert check.verify_password("dave", "dave-pw").principal == user("dave")
    with pytest.raises(AuthenticationFailed):
        check.verify_password("dave", "wrong")


def test_without_a_mechanism_each_of_the_listener_is_tried_in_turn() -> None:
    check = verifier("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
    assert check.password_mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert check.verify_password("alice", "alice-pw").mechanism == "PLAIN"
    assert check.verify_password("carol", "carol-pw").mechanism == "SCRAM-SHA-256"
    assert check.verify_password("dave", "dave-pw").mechanism == "SCRAM-SHA-512"
    with pytest.raises(AuthenticationFailed):
        check.verify_password("carol", "wrong")


def test_a_mechanism_the_listener_does_not_offer_is_refused_by_name() -> None:
    check = verifier("SCRAM-SHA-256")
    with pytest.raises(MechanismNotEnabled, match="PLAIN is not enabled"):
        check.verify_password("alice", "alice-pw", "PLAIN")
    with pytest.raises(MechanismNotEnabled, match="OAUTHBEARER"):
        check.verify_token("x.y.z")
    with pytest.raises(ConfigError):
        verifier("GSSAPI")


def test_oauthbearer_tokens_carry_their_principal_and_expiry() -> None:
    check = verifier("OAUTHBEARER")
    assert check.accepts_tokens and check.password_mechanisms == []
    exp = int(time.time()) + 600
    verified = check.verify_token(unsecured_token({"sub": "erin", "exp": exp}))
    assert (verified.principal, verified.expires_ms) == (user("erin"), exp * 1000)
    with pytest.raises(AuthenticationFailed, match="invalid_token"):
        check.verify_token(unsecured_token({"sub": "erin", "exp": int(time.time()) - 60}))
    with pytest.raises(MechanismNotEnabled):
        check.verify_password("erin", "pw")
