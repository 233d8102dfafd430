"""OAUTHBEARER without sockets: the client message, unsecured and signed tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.security.oauth_tokens import Issuer

from samsa.errors import ConfigError, DecodeError
from samsa.protocol.sasl.exchange import SaslClientExchange
from samsa.protocol.sasl.oauthbearer import (
    client_message,
    parse_client_message,
    unsecured_login_token,
    unsecured_token,
)
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.oauth_validation import (
    ClaimRules,
    JwksValidator,
    TokenRefused,
    UnsecuredValidator,
)
from samsa.security.sasl.oauthbearer_server import OAuthBearerServer

NOW_MS = 1_800_000_000_000
NOW_S = NOW_MS // 1000


def test_client_message_round_trips_with_authzid_and_extensions() -> None:
    message = client_message("a.b.c", "alice", {"traceId": "7"})
    assert message == b"n,a=alice,\x01auth=Bearer a.b.c\x01traceId=7\x01\x01"
    assert parse_client_message(message) == ("a.b.c", "alice", {"traceId": "7"})
    for bad in (b"n,,auth=Bearer x", b"p,,\x01auth=Bearer x\x01\x01", b"n,,\x01\x01\x01"):
        with pytest.raises(DecodeError):
            parse_client_message(bad)


def test_unsecured_validator_checks_kafkas_claims() -> None:
    validator = UnsecuredValidator.from_jaas(
        {"unsecuredValidatorRequiredScope": "produce"}, "sasl.jaas.config"
    )
    good = {"sub": "alice", "exp": NOW_S + 60, "iat": NOW_S, "scope": "produce consume"}
    validated = validator.validate(unsecured_token(good), NOW_MS)
    assert (validated.principal, validated.expires_ms) == ("alice", (NOW_S + 60) * 1000)
    cases = {
        "past the token's expiration": {**good, "exp": NOW_S - 1},
        "issued in the future": {**good, "iat": NOW_S + 30},
        "no principal claim": {k: v for k, v in good.items() if k != "sub"},
        "no numeric exp": {**good, "exp": "soon"},
        "lacks the required scope produce": {**good, "scope": ["consume"]},
    }
    for reason, claims in cases.items():
        with pytest.raises(TokenRefused, match=reason):
            validator.validate(unsecured_token(claims), NOW_MS)
    issuer = Issuer()
    with pytest.raises(TokenRefused, match="alg none"):
        validator.validate(issuer.token(good), NOW_MS)


def test_jwks_validator_takes_rs256_and_es256_and_refuses_forgeries(tmp_path: Path) -> None:
    issuer = Issuer()
    rules = ClaimRules(audience=frozenset({"samsa"}), issuer="https://idp", skew_ms=0)
    validator = JwksValidator.from_file(f"file:{issuer.write_jwks(tmp_path)}", rules)
    claims = {"sub": "svc", "exp": NOW_S + 60, "aud": ["samsa"], "iss": "https://idp"}
    for alg in ("RS256", "ES256"):
        assert validator.validate(issuer.token(claims, alg), NOW_MS).principal == "svc"
    other = Issuer()
    with pytest.raises(TokenRefused, match="signature does not verify"):
        validator.validate(other.token(claims), NOW_MS)
    with pytest.raises(TokenRefused, match="does not match the key"):
        validator.validate(issuer.token(claims, "RS256", kid="ec-1"), NOW_MS)
    with pytest.raises(TokenRefused, match="audience"):
        validator.validate(issuer.token({**claims, "aud": "elsewhere"}), NOW_MS)
    with pytest.raises(TokenRefused, match="issuer"):
        validator.validate(issuer.token({**claims, "iss": "https://evil"}), NOW_MS)
    with pytest.raises(TokenRefused, match="no key in the JWKS for kid None"):
        validator.validate(unsecured_token(claims), NOW_MS)


def test_a_missing_or_bad_jwks_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        JwksValidator.from_file(str(tmp_path / "none.json"), ClaimRules())
    (tmp_path / "empty.json").write_text(json.dumps({"keys": []}))
    with pytest.raises(ConfigError, match="holds no keys"):
        JwksValidator.from_file(str(tmp_path / "empty.json"), ClaimRules())


def test_server_answers_a_refused_token_with_kafkas_json_then_fails() -> None:
    server = OAuthBearerServer(UnsecuredValidator(ClaimRules()), lambda: NOW_MS)
    expired = unsecured_token({"sub": "bob", "exp": NOW_S - 10})
    client = SaslClientExchange("OAUTHBEARER", "", "", token=expired)
    challenge = server.evaluate(client.first())
    assert json.loads(challenge) == {"status": "invalid_token"}
    ack = client.next(challenge)
    assert ack == b"\x01"
    with pytest.raises(AuthenticationFailed, match="invalid_token"):
        server.evaluate(ack)
    assert not server.complete


def test_server_accepts_the_clients_unsecured_login_token() -> None:
    token = unsecured_login_token(
        {"unsecuredLoginStringClaim_sub": "carol", "unsecuredLoginListClaim_scope": ",a,b"},
        NOW_MS,
    )
    validator = UnsecuredValidator(ClaimRules(required_scope=frozenset({"a", "b"})))
    server = OAuthBearerServer(validator, lambda: NOW_MS)
    client = SaslClientExchange("OAUTHBEARER", "", "", token=token)
    assert server.evaluate(client.first()) == b""
    assert client.next(b"") is None
    assert server.complete and server.authorization_id == "carol"
    assert server.token_expiry_ms == NOW_MS + 3600 * 1000
