"""JAAS lines and the listener security protocol map, as Kafka writes them."""

from __future__ import annotations

import pytest

from samsa.config.jaas import parse_jaas
from samsa.config.security_protocols import SecurityProtocol, listener_protocol, parse_protocol_map
from samsa.errors import ConfigError


def test_jaas_options_users_and_escapes() -> None:
    jaas = parse_jaas(
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="admin" password="admin-secret" user_admin="admin-secret" '
        'user_alice="al\\"ice" debug=true;'
    )
    assert jaas.login_module.endswith("PlainLoginModule")
    assert (jaas.username, jaas.password) == ("admin", "admin-secret")
    assert jaas.users == {"admin": "admin-secret", "alice": 'al"ice'}
    assert jaas.options["debug"] == "true"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "PlainLoginModule",
        'M required user_a="x"',
        'M required user_a="x"; extra',
        "M required =x;",
    ],
)
def test_jaas_mistakes_name_the_key(text: str) -> None:
    with pytest.raises(ConfigError, match=r"listener.name.sasl.plain.sasl.jaas.config"):
        parse_jaas(text, "listener.name.sasl.plain.sasl.jaas.config")


def test_protocol_map_and_defaults_by_listener_name() -> None:
    mapping = parse_protocol_map("CLIENT:SASL_SSL, internal:ssl ,CONTROLLER:PLAINTEXT")
    assert mapping == {
        "CLIENT": SecurityProtocol.SASL_SSL,
        "INTERNAL": SecurityProtocol.SSL,
        "CONTROLLER": SecurityProtocol.PLAINTEXT,
    }
    assert listener_protocol("SASL_PLAINTEXT", mapping) is SecurityProtocol.SASL_PLAINTEXT
    assert listener_protocol("ANYTHING", {}) is SecurityProtocol.PLAINTEXT
    with pytest.raises(ConfigError, match=r"no entry for listener OTHER"):
        listener_protocol("OTHER", mapping)
    with pytest.raises(ConfigError, match=r"unknown security protocol 'TLS'"):
        parse_protocol_map("A:TLS")
    with pytest.raises(ConfigError, match=r"expected NAME:PROTOCOL"):
        parse_protocol_map("SSL")
    assert SecurityProtocol.SASL_SSL.uses_tls and SecurityProtocol.SASL_SSL.uses_sasl
    assert not SecurityProtocol.SSL.uses_sasl and not SecurityProtocol.SASL_PLAINTEXT.uses_tls
