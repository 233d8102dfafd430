"""The node's listeners: binding them, and where each is reached.

Every listener binds before the metadata quorum starts (the quorum needs their
real ports to tell the other voters where this node listens).  Each gets a
socket server with the node's connection quotas, its security protocol's TLS
and SASL gate, and a dispatcher that routes its requests to whatever router
``listener_routing`` has installed for it by then.  A listener serves clients,
the controller quorum, or both (``controller.listener.names``); clients are
told the advertised address (``advertised.listeners``, else the bound one).
"""

from __future__ import annotations

import logging
from typing import Any

from samsa.config.broker_config import BrokerConfig
from samsa.config.listeners import Listener
from samsa.config.node_settings import NodeSettings
from samsa.config.synonyms import listener_ssl_setting
from samsa.controller.image.delegation_token_image import DelegationTokenImage
from samsa.errors import ConfigError
from samsa.protocol.sasl.scram import ScramCredential
from samsa.raft.records import Endpoint
from samsa.server.connections.bind_failure import explain_bind_failure
from samsa.server.connections.connection_quotas import ConnectionQuotas
from samsa.server.connections.listener_routing import ListenerRouting
from samsa.server.connections.listener_security import socket_server
from samsa.server.connections.socket_server import SocketServer
from samsa.server.connections.tls_connection import ListenerTls
from samsa.server.metadata.delegation_tokens import NodeTokens
from samsa.server.metadata.loader import MetadataLoader

log = logging.getLogger("samsa.server")


class NodeListeners:
    """The listeners part of a ``Node`` (which sets these attributes)."""

    config: BrokerConfig
    settings: NodeSettings
    routing: ListenerRouting
    bound: dict[str, tuple[str, int]]
    """Each listener's bound address (its real port when configured as 0)."""
    tls_listeners: dict[str, ListenerTls]
    loader: MetadataLoader | None
    tokens: NodeTokens
    broker: Any
    _servers: dict[str, SocketServer]

    async def _bind_listeners(self) -> None:
        """Bind every listener, with the connection quotas they share."""
        config = self.config
        quotas = ConnectionQuotas(
            self._current_setting,
            {
                listener.name: int(config.for_listener(listener.name, "max.connections"))
                for listener in self.settings.listeners
                if config.is_explicit(f"listener.name.{listener.name.lower()}.max.connections")
            },
        )
        quotas.protected_listener = self.settings.inter_broker_listener_name
        servers = {
            listener.name: socket_server(
                config,
                listener,
                self.settings.protocol_of(listener.name),
                self.routing.dispatcher(listener.name),
                quotas=quotas,
                scram_credentials=self._stored_scram_credential,
                tls_listeners=self.tls_listeners,
                tokens=self.tokens.login,
            )
            for listener in self.settings.listeners
        }
        for listener in self.settings.listeners:
            server = servers[listener.name]
            where = (listener.host, listener.port)
            with explain_bind_failure(f"listener {listener.name}", *where):
                self.bound[listener.name] = await server.start(*where)
            log.info(
                "listener %s (%s) bound to %s:%d",
                listener.name,
                self.settings.protocol_of(listener.name).name,
                *self.bound[listener.name],
            )
            self._servers[listener.name] = server

    def _current_setting(self, name: str) -> Any:
        """A setting as it is now: the broker's dynamic view once it runs."""
        if self.broker is not None:
            return self.broker.dynamic_config[name]
        return self.config[name]

    def advertised(self, listener: Listener) -> tuple[str, int]:
        for adv in self.settings.advertised:
            if adv.name == listener.name:
                return adv.host, adv.port
        host, port = self.bound[listener.name]
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        return host, port

    def controller_listeners(self) -> list[Listener]:
        return [
            listener
            for listener in self.settings.listeners
            if self.settings.serves_controller(listener)
        ]

    def client_listeners(self) -> list[Listener]:
        return [
            listener
            for listener in self.settings.listeners
            if self.settings.serves_clients(listener)
        ]

    def serves_controller_on(self, listener_name: str) -> bool:
        """The quorum's RPCs (the metadata Fetch among them) are served here."""
        return any(
            listener.name == listener_name and self.settings.serves_controller(listener)
            for listener in self.settings.listeners
        )

    def controller_endpoints(self) -> tuple[Endpoint, ...]:
        return tuple(
            Endpoint(listener.name, *self.advertised(listener))
            for listener in self.controller_listeners()
        )

    @property
    def controller_listener_name(self) -> str:
        names = self.settings.controller_listener_names
        if names:
            return names[0]
        return self.settings.listeners[0].name

    def reload_tls(self, dynamic_configs: dict[str, str]) -> None:
        """Give each TLS listener the keystore its dynamic ``listener.name.<l>.ssl.*``
        settings name; a keystore that does not load is logged and the old one kept."""
        overrides: dict[str, dict[str, str]] = {name: {} for name in self.tls_listeners}
        for name, value in dynamic_configs.items():
            setting = listener_ssl_setting(name)
            if setting is not None and setting[0] in overrides:
                overrides[setting[0]][setting[1]] = value
        for listener, tls in self.tls_listeners.items():
            try:
                if tls.reload(overrides[listener]):
                    log.info("listener %s: reloaded its SSL keystore", listener)
            except ConfigError as exc:
                log.error("listener %s: keeping the old SSL keystore: %s", listener, exc)

    def _tokens(self) -> DelegationTokenImage:
        """The delegation tokens this node has replayed (none before its log is open)."""
        return (
            DelegationTokenImage() if self.loader is None else self.loader.image.delegation_tokens
        )

    def _stored_scram_credential(self, user: str, mechanism: str) -> ScramCredential | None:
        """A SCRAM credential of the metadata log, as this node has replayed it."""
        return None if self.loader is None else self.loader.image.scram.get(user, mechanism)
