"""Cluster settings in Kafka's notation, and the combinations refused at start."""

from __future__ import annotations

import pytest

from samsa.config.broker_config import BrokerConfig
from samsa.config.listeners import Listener, QuorumVoter
from samsa.config.node_settings import NodeSettings
from samsa.errors import ConfigError


def test_the_default_is_a_standalone_combined_node() -> None:
    node = NodeSettings.from_config(BrokerConfig())
    assert node.is_broker and node.is_controller and node.standalone
    assert node.listeners == (Listener("PLAINTEXT", "127.0.0.1", 9092),)
    assert node.serves_controller(node.listeners[0]) and node.serves_clients(node.listeners[0])
    assert node.inter_broker_listener_name == "PLAINTEXT"


def test_bare_host_port_is_plaintext() -> None:
    node = NodeSettings.from_config(BrokerConfig({"listeners": "127.0.0.1:0"}))
    assert node.listeners == (Listener("PLAINTEXT", "127.0.0.1", 0),)


def test_kafka_style_combined_node() -> None:
    config = BrokerConfig(
        {
            "node.id": "2",
            "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
            "controller.listener.names": "CONTROLLER",
            "controller.quorum.voters": "1@127.0.0.1:19093,2@127.0.0.1:9093,3@127.0.0.1:29093",
        }
    )
    node = NodeSettings.from_config(config)
    plaintext, controller = node.listeners
    assert node.serves_clients(plaintext) and not node.serves_controller(plaintext)
    assert node.serves_controller(controller) and not node.serves_clients(controller)
    assert node.static_voters[1] == QuorumVoter(2, "127.0.0.1", 9093)
    assert node.is_static_voter and not node.standalone


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"process.roles": "broker"}, "broker-only node needs"),
        ({"process.roles": "zookeeper"}, "process.roles"),
        ({"controller.quorum.voters": "2@h:1"}, "not one of controller.quorum.voters"),
        ({"controller.quorum.voters": "x@h:1"}, "expected ID@HOST:PORT"),
        ({"controller.listener.names": "CONTROLLER"}, "CONTROLLER not in listeners"),
        ({"listeners": "PLAINTEXT://h:99999"}, "expected HOST:PORT"),
        ({"advertised.listeners": "EXTERNAL://h:1"}, "EXTERNAL is not one of listeners"),
        ({"listener.security.protocol.map": "PLAINTEXT:TLS"}, "unknown security protocol 'TLS'"),
        (
            {
                "listeners": "PLAINTEXT://h:1,EXTERNAL://h:2",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT",
            },
            "no entry for listener EXTERNAL",
        ),
        (
            {"process.roles": "broker", "controller.quorum.voters": "1@h:1"},
            "has no controller",
        ),
        (
            {
                "listeners": "CONTROLLER://h:1",
                "controller.listener.names": "CONTROLLER",
            },
            "needs a listener that is not a controller listener",
        ),
    ],
)
def test_inconsistent_settings_are_refused_naming_the_key(
    values: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        NodeSettings.from_config(BrokerConfig(values))


def test_each_listener_gets_its_security_protocol() -> None:
    settings = NodeSettings.from_config(
        BrokerConfig(
            {
                "listeners": "INTERNAL://h:1,EXTERNAL://h:2,SASL_SSL://h:3",
                "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT,EXTERNAL:SSL",
                "inter.broker.listener.name": "INTERNAL",
            }
        )
    )
    assert {name: p.name for name, p in settings.protocols.items()} == {
        "INTERNAL": "SASL_PLAINTEXT",
        "EXTERNAL": "SSL",
        "SASL_SSL": "SASL_SSL",
    }
    assert settings.inter_broker_listener_name == "INTERNAL"
    default = NodeSettings.from_config(BrokerConfig({}))
    assert default.protocol_of("PLAINTEXT").name == "PLAINTEXT"


def test_listener_prefixed_security_settings_override_the_node_wide_ones() -> None:
    config = BrokerConfig(
        {
            "ssl.client.auth": "requested",
            "listener.name.external.ssl.client.auth": "required",
            "listener.name.external.scram-sha-512.sasl.jaas.config": 'M required user_a="1";',
            "sasl.jaas.config": "M required;",
        }
    )
    assert config.for_listener("EXTERNAL", "ssl.client.auth") == "required"
    assert config.for_listener("INTERNAL", "ssl.client.auth") == "requested"
    assert config.jaas_for("EXTERNAL", "SCRAM-SHA-512") == (
        'M required user_a="1";',
        "listener.name.external.scram-sha-512.sasl.jaas.config",
    )
    assert config.jaas_for("EXTERNAL", "PLAIN") == ("M required;", "sasl.jaas.config")
    assert config.value_of("listener.name.external.ssl.client.auth") == "required"
    with pytest.raises(ConfigError, match="unknown broker config key"):
        BrokerConfig({"listener.name.external.log.dirs": "/x"})
