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
* ``console.session.max.lifetime.ms`` of at least a second;
* the schema registry (``registry.listen``) on a broker with an authorizer,
  or whose client listeners all take SASL logins only, needs
  ``registry.login.listener`` (its users log in with HTTP Basic); there is no
  loopback-only rule for an open registry, which is no more open than the
  broker's own plaintext listeners; ``registry.advertised.url`` must be a URL.

Light on imports: the node checks these before it starts anything; the
endpoints themselves are built by ``http_endpoints``.
"""

from __future__ import annotations

import ssl

from samsa.config.broker_config import BrokerConfig
from samsa.config.broker_keys import KEYS
from samsa.config.node_settings import NodeSettings
from samsa.config.ssl import server_context
from samsa.config.values import parse_host_port
from samsa.errors import ConfigError
from samsa.http.hosts import is_loopback


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
    if config["registry.listen"]:
        _check_registry(config, settings, authorizer_on)


def _check_registry(config: BrokerConfig, settings: NodeSettings, authorizer_on: bool) -> None:
    parse_host_port(str(config["registry.listen"]))
    endpoint_tls(config, "registry")
    url = str(config["registry.advertised.url"]).strip()
    if url:
        from samsa.registry.node.settings import parse_url

        parse_url(url)
    if login_listener(config, settings, "registry.login.listener") is not None:
        return
    sasl = sasl_listeners(settings)
    clients = [listener for listener in settings.listeners if settings.serves_clients(listener)]
    where = (
        f"set registry.login.listener to its SASL listener ({', '.join(sasl)})"
        if sasl
        else "add a SASL listener for its users and name it in registry.login.listener"
    )
    if authorizer_on:
        raise ConfigError(
            "registry.login.listener is required: this broker has an authorizer "
            f"(authorizer.class.name), so its schema registry must log users in: {where}"
        )
    if clients and len(sasl) == len(clients):
        raise ConfigError(
            "registry.login.listener is required: every client listener of this broker takes "
            f"SASL logins only, so its schema registry must log users in too: {where}"
        )


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
