"""OAUTHBEARER with real clients: librdkafka's unsecured JWT and token callback, the Samsa client.

One broker for the module: SASL_PLAINTEXT takes Kafka's unsecured tokens
(requiring the ``produce`` scope), SASL_SSL takes only tokens signed by the
test's issuer (its JWKS file).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.security.oauth_tokens import Issuer
from tests.security.secured_broker import (
    SecuredBroker,
    librdkafka_delivers,
    running_secured_broker,
)

from samsa.client import Producer
from samsa.errors import ErrorCode, KafkaError

pytestmark = pytest.mark.timeout(180)

UNSECURED_JAAS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
    'unsecuredValidatorRequiredScope="produce";'
)


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory, issuer: Issuer) -> Iterator[SecuredBroker]:
    tmp = tmp_path_factory.mktemp("oauth")
    jwks = issuer.write_jwks(tmp)
    with running_secured_broker(
        tmp,
        {
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
            "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": UNSECURED_JAAS,
            "listener.name.sasl_ssl.sasl.oauthbearer.jwks.endpoint.url": f"file:{jwks}",
            "listener.name.sasl_ssl.sasl.oauthbearer.expected.audience": "samsa",
        },
    ) as broker:
        yield broker


def _oauth(secured: SecuredBroker, protocol: str) -> dict[str, Any]:
    conf = {**secured.librdkafka(protocol), "sasl.mechanism": "OAUTHBEARER"}
    return conf


def test_librdkafka_unsecured_jwt_with_the_required_scope(secured: SecuredBroker) -> None:
    conf = {
        **_oauth(secured, "SASL_PLAINTEXT"),
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=alice scope=produce",
    }
    assert librdkafka_delivers(conf, "oauth-unsecured") == "delivered"
    refused = librdkafka_delivers(
        {**conf, "sasl.oauthbearer.config": "principal=alice scope=consume"}, "oauth-unsecured"
    )
    assert "insufficient_scope" in refused


def test_librdkafka_signed_token_from_its_callback(secured: SecuredBroker, issuer: Issuer) -> None:
    def token(claims: dict[str, Any]) -> Any:
        return lambda _config: (issuer.token(claims, "ES256"), claims["exp"], claims["sub"])

    claims = {"sub": "svc", "aud": "samsa", "exp": time.time() + 300, "iat": time.time()}
    conf = _oauth(secured, "SASL_SSL")
    assert librdkafka_delivers({**conf, "oauth_cb": token(claims)}, "oauth-signed") == "delivered"
    wrong_audience = {**claims, "aud": "elsewhere"}
    refused = librdkafka_delivers({**conf, "oauth_cb": token(wrong_audience)}, "oauth-signed")
    assert "invalid_token" in refused


def test_samsa_client_with_unsecured_jaas_and_a_token_provider(
    secured: SecuredBroker, issuer: Issuer
) -> None:
    unsecured = {
        "bootstrap.servers": secured.address("SASL_PLAINTEXT"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredLoginStringClaim_sub="alice" unsecuredLoginListClaim_scope=",produce";'
        ),
    }
    signed = {
        "bootstrap.servers": secured.address("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "ssl.truststore.certificates": secured.ca.pem.cert,
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.token.provider": lambda: issuer.token(
            {"sub": "svc", "aud": "samsa", "exp": time.time() + 300}
        ),
    }
    for conf in (unsecured, signed):
        producer = Producer(conf)
        try:
            producer.send("oauth-samsa", value=b"v").get(30)
        finally:
            producer.close()
    forged = Producer(
        {
            **signed,
            "max.block.ms": 30000,
            "sasl.oauthbearer.token.provider": lambda: Issuer().token(
                {"sub": "svc", "aud": "samsa", "exp": time.time() + 300}
            ),
        }
    )
    try:
        with pytest.raises(KafkaError) as refused:
            forged.send("oauth-samsa", value=b"x").get(20)
        assert refused.value.code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert "invalid_token" in str(refused.value)
    finally:
        forged.close()
