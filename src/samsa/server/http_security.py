"""How the console and ``/metrics`` are secured, from the broker's settings.

Start-up checks (``check_http_settings``, before anything binds), each a
ConfigError naming the setting:

* a console on a broker with an authorizer, or whose client listeners all
  take SASL logins only, needs ``console.login.listener`` (otherwise anyone
  reaching it would act with the node's own rights);
* a console without login binds to loopback only, unless
  ``console.allow.remote.anonymous=true``;
* ``console.login.listener`` / ``metrics.login.listener`` name a SASL
  listener of this broker, whose mechanisms and users the logins check
  against (SCRAM credentials from the metadata log included), with its
  ``connection.failed.authentication.delay.ms``;
* ``<endpoint>.ssl.*``: a keystore that loads (the endpoint then serves HTTPS);
* ``console.session.max.lifetime.ms`` of at least a second.

The Host names each endpoint answers come from its bind address and
``<endpoint>.allowed.hosts`` (``samsa.http.hosts``).
"""

from __future__ import annotations

import logging
import ssl
from typing import TYPE_CHECKING

from samsa.config import KEYS, BrokerConfig, parse_host_port
from samsa.errors import ConfigError
from samsa.http.backoff import LoginBackoff
from samsa.http.basic_auth import Authorize, BasicAuthGate
from samsa.http.credentials import PasswordCheck
from samsa.http.endpoint import EndpointSecurity
from samsa.http.hosts import HostCheck, is_loopback
from samsa.http.login import SessionLogin
from samsa.http.routes import Gate
from samsa.http.sessions import SessionStore
from samsa.node_settings import NodeSettings
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.security.principal import KafkaPrincipal
from samsa.security.sasl.verifier import CredentialVerifier
from samsa.server.listener_security import listener_mechanisms
from samsa.ssl_settings import server_context

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

log = logging.getLogger("samsa.server")

CLUSTER_NAME = "kafka-cluster"


def sasl_listeners(settings: NodeSettings) -> list[str]:
    """This broker's client listeners that take SASL logins."""
    return [
        listener.name
        for listener in settings.listeners
        if settings.serves_clients(listener) and settings.protocol_of(listener.name).uses_sasl
    ]


def login_listener(config: BrokerConfig, settings: NodeSettings, key: str) -> str | None:
    """The SASL listener ``key`` names (None when unset); ConfigError otherwise."""
    name = str(config[key]).strip().upper()
    if not name:
        return None
    choices = sasl_listeners(settings)
    if name not in choices:
        listed = ", ".join(choices) if choices else "it has none"
        raise ConfigError(f"{key}={config[key]}: not a SASL listener of this broker ({listed})")
    return name


def check_http_settings(config: BrokerConfig, settings: NodeSettings, authorizer_on: bool) -> None:
    """Refuse settings that would leave the console or ``/metrics`` open to
    whom the broker's own listeners refuse (see the module's docstring)."""
    address = str(config["console.listen"])
    if address:
        host, _ = parse_host_port(address)
        if login_listener(config, settings, "console.login.listener") is None:
            _check_open_console(config, settings, authorizer_on, host, address)
        lifetime_ms = int(config["console.session.max.lifetime.ms"])
        if lifetime_ms < 1000:
            raise ConfigError(
                f"console.session.max.lifetime.ms={lifetime_ms}: a login must last at least 1000 ms"
            )
        endpoint_tls(config, "console")
    if config["metrics.listen"]:
        login_listener(config, settings, "metrics.login.listener")
        endpoint_tls(config, "metrics")


def _check_open_console(
    config: BrokerConfig, settings: NodeSettings, authorizer_on: bool, host: str, address: str
) -> None:
    sasl = sasl_listeners(settings)
    clients = [listener for listener in settings.listeners if settings.serves_clients(listener)]
    where = (
        f"set console.login.listener to its SASL listener ({', '.join(sasl)})"
        if sasl
        else "add a SASL listener for its users and name it in console.login.listener"
    )
    if authorizer_on:
        raise ConfigError(
            "console.login.listener is required: this broker has an authorizer "
            f"(authorizer.class.name), so its console must log users in: {where}"
        )
    if clients and len(sasl) == len(clients):
        raise ConfigError(
            "console.login.listener is required: every client listener of this broker "
            f"takes SASL logins only, so its console must log users in too: {where}"
        )
    if not is_loopback(host) and not config["console.allow.remote.anonymous"]:
        raise ConfigError(
            f"console.listen={address} would serve a console without login beyond this "
            "machine: bind it to 127.0.0.1, set console.login.listener, or set "
            "console.allow.remote.anonymous=true"
        )


def endpoint_tls(config: BrokerConfig, endpoint: str) -> ssl.SSLContext | None:
    """The TLS context ``<endpoint>.ssl.*`` describe, None without a keystore."""

    def lookup(key: str) -> str:
        name = f"{endpoint}.{key}"
        if name in KEYS:
            return str(config[name])
        return "none" if key == "ssl.client.auth" else ""

    if not any(lookup(k) for k in ("ssl.keystore.location", "ssl.keystore.certificate.chain")):
        if lookup("ssl.keystore.key"):
            raise ConfigError(
                f"{endpoint}.ssl.keystore.key needs {endpoint}.ssl.keystore.certificate.chain"
            )
        return None
    try:
        return server_context(lookup)
    except ConfigError as exc:
        raise ConfigError(f"{endpoint}.{exc}") from None


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
    """TLS, Host names and login of the console or the metrics endpoint
    (``endpoint``: the settings' prefix) listening at ``address``."""
    config = broker.config
    bind_host, _ = parse_host_port(address)
    tls = endpoint_tls(config, endpoint)
    hosts = HostCheck(
        bind_host, config[f"{endpoint}.allowed.hosts"], setting=f"{endpoint}.allowed.hosts"
    )
    listener = login_listener(config, settings, f"{endpoint}.login.listener")
    gate: Gate | None = None
    if endpoint == "console" and listener is not None:
        lifetime_s = int(config["console.session.max.lifetime.ms"]) / 1000
        gate = SessionLogin(
            _password_check(broker, listener, "console login"),
            SessionStore(lifetime_s),
            secure=tls is not None,
            public=("/", "/static/*"),
        )
    elif endpoint == "metrics" and listener is not None:
        gate = BasicAuthGate(
            _password_check(broker, listener, "metrics login"),
            realm="samsa metrics",
            authorize=_describe_cluster(broker),
        )
    _warn(endpoint, address, bind_host, tls is not None, gate is not None, broker)
    return EndpointSecurity(tls, hosts, gate)


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
