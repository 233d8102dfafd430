"""Broker keys of the HTTP endpoints beside the Kafka listeners: the Prometheus
``/metrics`` endpoint and the web console, each with its own login and TLS."""

from __future__ import annotations

from samsa.config.values import ConfigKey, parse_bool, parse_list


def endpoint_ssl_keys(endpoint: str) -> list[ConfigKey]:
    """``<endpoint>.ssl.*``: TLS for an HTTP endpoint, as for a listener (PEM)."""
    what = f"the {endpoint} endpoint"
    return [
        ConfigKey(
            f"{endpoint}.ssl.keystore.location",
            str,
            "",
            f"PEM file with the key and certificate chain of {what}: set, it serves HTTPS only.",
        ),
        ConfigKey(
            f"{endpoint}.ssl.keystore.certificate.chain", str, "", f"Inline PEM chain of {what}."
        ),
        ConfigKey(f"{endpoint}.ssl.keystore.key", str, "", f"Inline PEM private key of {what}."),
        ConfigKey(f"{endpoint}.ssl.keystore.type", str, "PEM", "Keystore format; PEM only."),
        ConfigKey(f"{endpoint}.ssl.key.password", str, "", "Password of an encrypted PEM key."),
        ConfigKey(
            f"{endpoint}.ssl.enabled.protocols", str, "TLSv1.2,TLSv1.3", f"TLS versions of {what}."
        ),
    ]


ENDPOINT_KEYS: list[ConfigKey] = [
    ConfigKey("metrics.listen", str, "", "HOST:PORT of the Prometheus endpoint (empty: off)."),
    ConfigKey(
        "metrics.login.listener",
        str,
        "",
        "A SASL listener whose users /metrics takes by HTTP Basic authentication (its mechanisms "
        "and users); with an authorizer they need DESCRIBE on the cluster (empty: no login).",
    ),
    ConfigKey(
        "metrics.allowed.hosts",
        parse_list,
        [],
        "Host header names /metrics answers besides its bind address (and localhost for a "
        "loopback bind); * answers any.",
    ),
    *endpoint_ssl_keys("metrics"),
    ConfigKey("console.listen", str, "", "HOST:PORT of the web console (empty: off)."),
    ConfigKey(
        "console.allow.actions",
        parse_bool,
        False,
        "Let the web console create topics, add partitions, produce, reset offsets, delete records.",
    ),
    ConfigKey(
        "console.login.listener",
        str,
        "",
        "A SASL listener whose users log in to the console (its mechanisms, users and "
        "connection.failed.authentication.delay.ms); required with an authorizer or SASL-only "
        "client listeners (empty: no login).",
    ),
    ConfigKey(
        "console.session.max.lifetime.ms",
        int,
        28800000,
        "How long a console login lasts (an OAUTHBEARER token's expiry ends it sooner).",
    ),
    ConfigKey(
        "console.allow.remote.anonymous",
        parse_bool,
        False,
        "Let a console without login bind to an address other than loopback (anyone who "
        "reaches it sees and, with console.allow.actions, changes everything).",
    ),
    ConfigKey(
        "console.allowed.hosts",
        parse_list,
        [],
        "Host header names the console answers besides its bind address (and localhost for a "
        "loopback bind); * answers any (behind a proxy that checks it).",
    ),
    *endpoint_ssl_keys("console"),
]
