"""Turn a listener's security protocol and settings into its socket server.

PLAINTEXT: plain connections, zero-copy fetches.  SSL: TLS connections
(``tls_connection``).  SASL_*: the ``SaslGate`` in front of the listener's
dispatch, with the mechanisms and users its settings give.  Settings are
looked up per listener first (``listener.name.<listener>.<key>``), as Kafka
does, and every mistake stops the node at start-up naming the key.
"""

from __future__ import annotations

from collections.abc import Callable

from samsa.config.broker_config import BrokerConfig
from samsa.config.jaas import parse_jaas
from samsa.config.listeners import Listener
from samsa.config.security_protocols import SecurityProtocol
from samsa.config.ssl import client_context
from samsa.errors import ConfigError
from samsa.net.channel import ChannelSecurity
from samsa.security.sasl.credentials import server_mechanisms
from samsa.security.sasl.scram_server import CredentialLookup, TokenLookup
from samsa.security.sasl.session import MechanismFactory
from samsa.server.connections.connection_quotas import ConnectionQuotas
from samsa.server.connections.router import Router
from samsa.server.connections.sasl_gate import SaslGate, register_after_login
from samsa.server.connections.socket_server import Connection, Dispatch, SocketServer
from samsa.server.connections.tls_connection import ListenerTls


def socket_server(
    config: BrokerConfig,
    listener: Listener,
    protocol: SecurityProtocol,
    dispatch: Dispatch,
    quotas: ConnectionQuotas | None = None,
    scram_credentials: CredentialLookup | None = None,
    tls_listeners: dict[str, ListenerTls] | None = None,
    tokens: TokenLookup | None = None,
) -> SocketServer:
    """The listener's server; a TLS listener's ``ListenerTls`` goes into
    ``tls_listeners`` so its keystore can be reloaded later; ``tokens`` are
    the delegation tokens its SCRAM logins may name."""

    def lookup(key: str) -> str:
        return config.for_listener(listener.name, key)

    factory: Callable[[SocketServer], Connection] = Connection
    delay_ms = int(lookup("connection.failed.authentication.delay.ms"))
    if protocol.uses_tls:
        tls = ListenerTls(lookup)
        factory = tls.connection
        if tls_listeners is not None:
            tls_listeners[listener.name] = tls
    if protocol.uses_sasl:
        mechanisms = listener_mechanisms(config, listener.name, scram_credentials, tokens)
        dispatch = SaslGate(
            dispatch,
            mechanisms,
            failed_delay_ms=delay_ms,
            max_reauth_ms=int(config["connections.max.reauth.ms"]),
        ).dispatch
    return SocketServer(
        dispatch,
        max_request_size=config["socket.request.max.bytes"],
        idle_timeout_ms=config["connections.max.idle.ms"],
        quotas=quotas,
        use_sendfile=not protocol.uses_tls,
        connection_factory=factory,
        requires_authentication=protocol.uses_sasl,
        unauthenticated_request_size=int(lookup("sasl.server.max.receive.size")),
        failed_authentication_delay_ms=delay_ms,
        listener_name=listener.name,
    )


def listener_mechanisms(
    config: BrokerConfig,
    listener_name: str,
    scram_credentials: CredentialLookup | None,
    tokens: TokenLookup | None = None,
) -> dict[str, MechanismFactory]:
    """The SASL mechanisms ``listener_name`` offers, with its users: what its
    connections log in with, and what the HTTP logins naming it check against."""
    enabled = [
        m.strip().upper()
        for m in config.for_listener(listener_name, "sasl.enabled.mechanisms").split(",")
        if m.strip()
    ]
    if not enabled:
        raise ConfigError(f"sasl.enabled.mechanisms: listener {listener_name} needs at least one")
    return server_mechanisms(
        enabled,
        lambda m: config.jaas_for(listener_name, m),
        scram_credentials,
        setting=lambda key: str(config.for_listener(listener_name, key)),
        tokens=tokens,
    )


def secure_router(router: Router) -> Router:
    """Add what a listener answers besides its APIs: the SASL APIs, which
    Kafka lists on every listener (a SASL one's gate answers them before the
    login; after it, or on a listener without SASL, they are refused with
    ILLEGAL_SASL_STATE)."""
    register_after_login(router)
    return router


def channel_security(
    config: BrokerConfig,
    listener_name: str,
    protocol: SecurityProtocol,
    mechanism_key: str,
    *,
    standalone: bool = False,
) -> ChannelSecurity | None:
    """How this node connects to ``listener_name`` on other nodes (Kafka's
    inter-broker and controller clients): that listener's ``ssl.*`` settings,
    and the ``username``/``password`` of its JAAS line for ``mechanism_key``.
    A standalone node has no peers to log in to, so it needs no credentials
    of its own (a node that later joins it must be given them)."""
    if protocol is SecurityProtocol.PLAINTEXT:
        return None

    def lookup(key: str) -> str:
        return config.for_listener(listener_name, key)

    context = client_context(lookup) if protocol.uses_tls else None
    if not protocol.uses_sasl:
        return ChannelSecurity(context)
    mechanism = str(config[mechanism_key]).strip().upper()
    text, key = config.jaas_for(listener_name, mechanism)
    jaas = parse_jaas(text, key) if text else None
    if jaas is None or not jaas.username:
        if standalone:
            return ChannelSecurity(context)
        raise ConfigError(
            f"{key}: this node logs in to {listener_name} with {mechanism} "
            f'({mechanism_key}) and needs username="..." password="..." there'
        )
    return ChannelSecurity(context, mechanism, jaas.username, jaas.password)
