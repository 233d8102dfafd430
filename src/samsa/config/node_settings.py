"""What a node is in the cluster, checked once at start-up.

``BrokerConfig`` holds raw values under Kafka's keys; this turns the cluster
related ones into one consistent picture (roles, listeners by purpose, how to
find the quorum) and refuses combinations Kafka refuses, each with a message
naming the key, so a mistyped cluster config stops the node at once instead of
leaving it waiting for a quorum it can never reach.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from samsa.config.broker_config import BrokerConfig
from samsa.config.listeners import (
    Listener,
    QuorumVoter,
    parse_bootstrap_servers,
    parse_listeners,
    parse_names,
    parse_roles,
    parse_voters,
)
from samsa.config.security_protocols import SecurityProtocol, listener_protocol, parse_protocol_map
from samsa.errors import ConfigError


@dataclass(frozen=True)
class NodeSettings:
    node_id: int
    roles: frozenset[str]
    listeners: tuple[Listener, ...]
    advertised: tuple[Listener, ...]
    """Advertised addresses given explicitly (others default to the bound one)."""
    controller_listener_names: tuple[str, ...]
    """Empty: the controller quorum is served on every listener (single node)."""
    inter_broker_listener_name: str
    static_voters: tuple[QuorumVoter, ...]
    bootstrap_servers: tuple[tuple[str, int], ...]
    protocols: dict[str, SecurityProtocol] = field(default_factory=dict)
    """Each listener's security protocol (``listener.security.protocol.map``)."""
    protocol_map: dict[str, SecurityProtocol] = field(default_factory=dict)

    def protocol_of(self, listener_name: str) -> SecurityProtocol:
        """Also for listeners of other nodes (a broker-only node's controller listener)."""
        if listener_name in self.protocols:
            return self.protocols[listener_name]
        return listener_protocol(listener_name, self.protocol_map)

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def standalone(self) -> bool:
        """A quorum of one, this node (the single-node default)."""
        return not self.static_voters and not self.bootstrap_servers

    @property
    def is_static_voter(self) -> bool:
        return any(v.node_id == self.node_id for v in self.static_voters)

    def serves_controller(self, listener: Listener) -> bool:
        return not self.controller_listener_names or listener.name in self.controller_listener_names

    def serves_clients(self, listener: Listener) -> bool:
        """Broker APIs are not served on dedicated controller listeners (as Kafka)."""
        return self.is_broker and listener.name not in self.controller_listener_names

    @classmethod
    def from_config(cls, config: BrokerConfig) -> NodeSettings:
        node_id = int(config["node.id"])
        if node_id < 0:
            raise ConfigError(f"node.id must be >= 0, got {node_id}")
        roles = parse_roles(str(config["process.roles"]))
        listeners = parse_listeners(str(config["listeners"]))
        advertised = parse_listeners(str(config["advertised.listeners"]), "advertised.listeners")
        controller_names = parse_names(str(config["controller.listener.names"]))
        voters = parse_voters(str(config["controller.quorum.voters"]))
        bootstrap = parse_bootstrap_servers(str(config["controller.quorum.bootstrap.servers"]))
        names = {listener.name for listener in listeners}
        protocol_map = parse_protocol_map(str(config["listener.security.protocol.map"]))
        protocols = {x.name: listener_protocol(x.name, protocol_map) for x in listeners}
        for adv in advertised:
            if adv.name not in names:
                raise ConfigError(
                    f"advertised.listeners: {adv.name} is not one of listeners ({', '.join(sorted(names))})"
                )
        if "controller" in roles:
            missing = [n for n in controller_names if n not in names]
            if missing:
                raise ConfigError(
                    f"controller.listener.names: {', '.join(missing)} not in listeners"
                )
            if voters and not any(v.node_id == node_id for v in voters) and not bootstrap:
                raise ConfigError(
                    f"node.id {node_id} is a controller but not one of controller.quorum.voters"
                )
        else:
            if not voters and not bootstrap:
                raise ConfigError(
                    "a broker-only node needs controller.quorum.voters or "
                    "controller.quorum.bootstrap.servers to find the controllers"
                )
            if any(v.node_id == node_id for v in voters):
                raise ConfigError(
                    f"node.id {node_id} is one of controller.quorum.voters but process.roles "
                    "has no controller"
                )
        inter_broker = str(config["inter.broker.listener.name"]).upper()
        if "broker" in roles:
            client_names = [x.name for x in listeners if x.name not in controller_names]
            if not client_names:
                raise ConfigError(
                    "listeners: a broker needs a listener that is not a controller listener"
                )
            if not inter_broker:
                inter_broker = client_names[0]
            elif inter_broker not in client_names:
                raise ConfigError(
                    f"inter.broker.listener.name {inter_broker} is not a broker listener"
                )
        return cls(
            node_id=node_id,
            roles=roles,
            listeners=tuple(listeners),
            advertised=tuple(advertised),
            controller_listener_names=tuple(controller_names),
            inter_broker_listener_name=inter_broker,
            static_voters=tuple(voters),
            bootstrap_servers=tuple(bootstrap),
            protocols=protocols,
            protocol_map=protocol_map,
        )
