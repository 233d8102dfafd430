"""The ``registry.*`` settings a node's registry runs with, read once at start.

``registry.advertised.url`` is where the other nodes forward writes to this
node when it is the primary.  Unset, it is the registry's own address: the
bind host (or, for a wildcard bind, the host the broker advertises to
clients) and the bound port, ``https`` when ``registry.ssl.*`` gives it a
certificate.  Nodes that reach each other by other names (containers, NAT)
must set it; two nodes with one URL make the election refuse to pick a
primary (``identity.DUPLICATE_URLS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from samsa.errors import ConfigError
from samsa.registry.node.broker_port import RegistryBroker
from samsa.registry.node.identity import Identity

WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
MIN_SESSION_TIMEOUT_MS = 1000


@dataclass(frozen=True)
class RegistrySettings:
    identity: Identity
    topic: str
    replication_factor: int
    group_id: str
    session_timeout_ms: int
    timeout_ms: int
    truststore: str
    """PEM CAs for forwarding to another node over HTTPS (empty: the system's)."""

    @property
    def url(self) -> str:
        return self.identity.url

    @property
    def transactional_id(self) -> str:
        """The primary's writer: a new primary's InitProducerId fences the old one's."""
        return f"{self.group_id}-primary"

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000

    @property
    def request_timeout_ms(self) -> int:
        """The Kafka client's per-request timeout: as short as the session (at least 3 s,
        at most Kafka's 30 s), so a request to a node that hangs (paused, cut off) fails
        and is sent elsewhere about as soon as the election gives up on that node."""
        return max(3000, min(30000, self.session_timeout_ms))

    @classmethod
    def read(
        cls, broker: RegistryBroker, bind_host: str, bound_port: int, tls: bool
    ) -> RegistrySettings:
        identity = advertised_identity(
            str(broker.setting("registry.advertised.url")),
            bind_host,
            bound_port,
            tls,
            broker.advertised_host,
            bool(broker.setting("registry.leader.eligibility")),
        )
        session_ms = int(broker.setting("registry.group.session.timeout.ms"))
        if session_ms < MIN_SESSION_TIMEOUT_MS:
            raise ConfigError(
                f"registry.group.session.timeout.ms={session_ms}: at least {MIN_SESSION_TIMEOUT_MS}"
            )
        replication = int(broker.setting("registry.topic.replication.factor"))
        if replication < 1:
            raise ConfigError(f"registry.topic.replication.factor={replication}: at least 1")
        topic = str(broker.setting("registry.topic")).strip()
        if not topic:
            raise ConfigError("registry.topic: a topic name is needed")
        return cls(
            identity,
            topic,
            replication,
            str(broker.setting("registry.group.id")).strip() or "schema-registry",
            session_ms,
            max(1000, int(broker.setting("registry.timeout.ms"))),
            str(broker.setting("registry.ssl.truststore.location")),
        )


def advertised_identity(
    url: str,
    bind_host: str,
    bound_port: int,
    tls: bool,
    advertised_host: object,
    eligible: bool,
) -> Identity:
    """This node's identity in the election; ConfigError for a malformed URL."""
    if url.strip():
        return parse_url(url.strip(), eligible)
    host = bind_host
    if host in WILDCARD_HOSTS:
        host = advertised_host() if callable(advertised_host) else str(advertised_host)
    return Identity(host, bound_port, "https" if tls else "http", eligible)


def parse_url(url: str, eligible: bool = True) -> Identity:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"registry.advertised.url={url}: expected http(s)://HOST:PORT")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ConfigError(f"registry.advertised.url={url}: bad port") from None
    if parts.path.strip("/"):
        raise ConfigError(f"registry.advertised.url={url}: no path (the API is at the root)")
    return Identity(parts.hostname, port, parts.scheme, eligible)
