"""The broker's HTTP endpoints: ``/metrics`` and the web console, when their
listen addresses are set, each with the TLS, the Host names and the login its
settings give (``http_security`` checked them at start-up).  The schema
registry's security is built here too (``registry_port`` binds it).

The console gets the broker through ``ConsolePort`` (``samsa.console`` never
imports the server); its Kafka requests are served by the handlers of the
listener its users log in on (or the first client listener), behind the
same authorization checks as that listener's.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from samsa.config.values import parse_host_port
from samsa.http.backoff import LoginBackoff
from samsa.http.basic_auth import Authorize, BasicAuthGate
from samsa.http.credentials import PasswordCheck
from samsa.http.endpoint import EndpointSecurity, HttpEndpoint
from samsa.http.hosts import HostCheck, is_loopback
from samsa.http.login import SessionLogin
from samsa.http.routes import Gate
from samsa.http.sessions import SessionStore
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.security.principal import KafkaPrincipal
from samsa.security.sasl.verifier import CredentialVerifier
from samsa.server.connections.bind_failure import explain_bind_failure
from samsa.server.connections.listener_security import listener_mechanisms
from samsa.server.endpoints.security_checks import endpoint_tls, login_listener

if TYPE_CHECKING:
    from samsa.config.node_settings import NodeSettings
    from samsa.server.broker import Broker
    from samsa.server.broker_api import BrokerApi
    from samsa.server.metadata.broker_view import BrokerView
    from samsa.server.observability.metrics import BrokerMetrics

log = logging.getLogger("samsa.server")

CLUSTER_NAME = "kafka-cluster"


async def bind_http_endpoints(broker: Broker, metrics: BrokerMetrics) -> list[HttpEndpoint]:
    """Build and bind each endpoint whose address is set (they answer once
    ``serve`` is called); ConfigError for a busy port or a bad setting."""
    from samsa.server.metadata.broker_view import BrokerView

    view = BrokerView(broker)
    config = broker.config
    settings = broker.node.settings
    endpoints = []
    for key, build in (("metrics.listen", _metrics), ("console.listen", _console)):
        address = str(config[key])
        if not address:
            continue
        endpoint = build(broker, settings, view, metrics, address)
        host, port = parse_host_port(address)
        with explain_bind_failure(f"the {endpoint.name} endpoint ({key})", host, port):
            await endpoint.bind(host, port)
        endpoints.append(endpoint)
    return endpoints


def _metrics(
    broker: Broker, settings: NodeSettings, view: BrokerView, metrics: BrokerMetrics, address: str
) -> HttpEndpoint:
    from samsa.server.observability.prometheus_endpoint import metrics_endpoint

    return metrics_endpoint(view, metrics, endpoint_security(broker, settings, "metrics", address))


def _console(
    broker: Broker, settings: NodeSettings, view: BrokerView, metrics: BrokerMetrics, address: str
) -> HttpEndpoint:
    from samsa.console import console_endpoint
    from samsa.server.endpoints.console_port import ConsolePort

    security = endpoint_security(broker, settings, "console", address)
    listener = login_listener(broker.config, settings, "console.login.listener")
    port = ConsolePort(broker, view, metrics, listener or broker.node.client_listeners()[0].name)
    return console_endpoint(
        port, allow_actions=bool(broker.config["console.allow.actions"]), security=security
    )


def _password_check(broker: BrokerApi, listener: str, what: str) -> PasswordCheck:
    config = broker.config
    mechanisms = listener_mechanisms(
        config, listener, lambda user, mechanism: broker.image.scram.get(user, mechanism)
    )
    delay_ms = int(config.for_listener(listener, "connection.failed.authentication.delay.ms"))
    return PasswordCheck(
        CredentialVerifier(mechanisms),
        failed_delay_ms=delay_ms,
        what=what,
        backoff=LoginBackoff(),
    )


def endpoint_security(
    broker: BrokerApi, settings: NodeSettings, endpoint: str, address: str
) -> EndpointSecurity:
    """TLS, Host names and login of the console, the metrics endpoint or the
    schema registry (``endpoint``: the settings' prefix) listening at ``address``."""
    config = broker.config
    bind_host, _ = parse_host_port(address)
    tls = endpoint_tls(config, endpoint)
    names = list(config[f"{endpoint}.allowed.hosts"])
    if endpoint == "registry":
        names += _registry_names(broker, bind_host)
    hosts = HostCheck(bind_host, names, setting=f"{endpoint}.allowed.hosts")
    listener = login_listener(config, settings, f"{endpoint}.login.listener")
    gate: Gate | None = None
    if endpoint == "console" and listener is not None:
        from samsa.console import PUBLIC_PATHS

        lifetime_s = int(config["console.session.max.lifetime.ms"]) / 1000
        gate = SessionLogin(
            _password_check(broker, listener, "console login"),
            SessionStore(lifetime_s),
            secure=tls is not None,
            public=PUBLIC_PATHS,
            # Cookies are per host, not per port: each node's console its own.
            cookie=f"samsa_session_{broker.node_id}",
        )
    elif endpoint == "registry" and listener is not None:
        # Per-subject ACLs are checked per request (samsa.registry.node.access).
        gate = BasicAuthGate(
            _password_check(broker, listener, "schema registry login"),
            realm="samsa schema registry",
        )
    elif endpoint == "metrics" and listener is not None:
        gate = BasicAuthGate(
            _password_check(broker, listener, "metrics login"),
            realm="samsa metrics",
            authorize=_describe_cluster(broker),
        )
    _warn(endpoint, address, bind_host, tls is not None, gate is not None, broker)
    return EndpointSecurity(tls, hosts, gate)


def _registry_names(broker: BrokerApi, bind_host: str) -> list[str]:
    """The names the other nodes forward writes to this node by: its advertised URL's host."""
    from urllib.parse import urlsplit

    url = str(broker.config["registry.advertised.url"]).strip()
    if url:
        return [urlsplit(url).hostname or ""]
    if bind_host in ("", "0.0.0.0", "::"):
        return [broker.advertised_endpoint()[0]]
    return []


def _describe_cluster(broker: BrokerApi) -> Authorize | None:
    """/metrics with an authorizer: DESCRIBE on the cluster, as DescribeConfigs(BROKER)."""
    authorizer = broker.authorizer
    if authorizer is None:
        return None

    def lacks(principal: KafkaPrincipal, host: str) -> str | None:
        if authorizer.authorize(
            str(principal), host, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME
        ):
            return None
        return f"DESCRIBE on CLUSTER {CLUSTER_NAME}"

    return lacks


def _warn(
    endpoint: str, address: str, bind_host: str, tls: bool, login: bool, broker: BrokerApi
) -> None:
    remote = not is_loopback(bind_host)
    if login and remote and not tls:
        log.warning(
            "the %s endpoint (%s) takes passwords over plain HTTP beyond this machine: "
            "give it a certificate (%s.ssl.keystore.location)",
            endpoint,
            address,
            endpoint,
        )
    if endpoint == "console" and not login and remote:
        log.warning(
            "the console (%s) has no login and answers anyone who reaches it "
            "(console.allow.remote.anonymous=true)",
            address,
        )
    if endpoint == "metrics" and not login and broker.authorizer is not None:
        log.warning(
            "/metrics (%s) takes no login while an authorizer is on: whoever reaches it "
            "reads topic names and client ids (metrics.login.listener)",
            address,
        )
