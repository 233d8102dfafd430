"""Quorum settings, named as Kafka names them.

Times are milliseconds.  ``from_properties`` reads the ``controller.quorum.*``
keys of a server.properties file; everything else has Kafka's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from samsa.errors import ConfigError
from samsa.raft.records import Endpoint
from samsa.raft.voters import VoterNode, VoterSet

__all__ = ["QuorumConfig", "parse_static_voters"]

_PROPERTY_NAMES = {
    "election_timeout_ms": "controller.quorum.election.timeout.ms",
    "fetch_timeout_ms": "controller.quorum.fetch.timeout.ms",
    "election_backoff_max_ms": "controller.quorum.election.backoff.max.ms",
    "request_timeout_ms": "controller.quorum.request.timeout.ms",
    "retry_backoff_ms": "controller.quorum.retry.backoff.ms",
}


@dataclass(frozen=True, slots=True)
class QuorumConfig:
    """Timing and sizing of the quorum; one object shared by every role.

    ``static_voters`` is ``controller.quorum.voters`` (kraft.version 0: the voter
    set is fixed); leave it ``None`` for a dynamic quorum (kraft.version 1), whose
    voters come from the bootstrap set or from ``Voters`` entries.
    ``bootstrap_servers`` is ``controller.quorum.bootstrap.servers`` (host:port);
    the machine addresses them with the negative ids Kafka gives them (-2, -3, ...,
    see ``bootstrap_server_id``).
    """

    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20
    fetch_max_wait_ms: int = 500
    fetch_max_bytes: int = 8 * 1024 * 1024
    fetch_max_entries: int = 4096
    fetch_snapshot_max_bytes: int = 1024 * 1024
    static_voters: VoterSet | None = None
    bootstrap_servers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, int) and value < 0:
                raise ConfigError(f"{_PROPERTY_NAMES.get(item.name, item.name)} must be >= 0")
        if self.fetch_max_entries < 1 or self.fetch_snapshot_max_bytes < 1:
            raise ConfigError("fetch sizes must be positive")

    @property
    def check_quorum_timeout_ms(self) -> int:
        """A leader that has not heard from a majority for this long resigns (Kafka: 1.5x)."""
        return self.fetch_timeout_ms * 3 // 2

    @property
    def begin_quorum_epoch_timeout_ms(self) -> int:
        """How often a leader re-announces itself to voters that stopped fetching."""
        return max(1, self.fetch_timeout_ms // 2)

    @staticmethod
    def bootstrap_server_id(index: int) -> int:
        """The id the machine uses for ``bootstrap_servers[index]`` (Kafka: -2, -3, ...)."""
        return -2 - index

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> QuorumConfig:
        """Read the ``controller.quorum.*`` keys; unknown keys are ignored."""
        values: dict[str, object] = {}
        for attribute, name in _PROPERTY_NAMES.items():
            if name in properties:
                try:
                    values[attribute] = int(properties[name])
                except ValueError as exc:
                    raise ConfigError(f"{name} must be an integer") from exc
        voters = properties.get("controller.quorum.voters", "").strip()
        if voters:
            values["static_voters"] = parse_static_voters(voters)
        servers = properties.get("controller.quorum.bootstrap.servers", "").strip()
        if servers:
            values["bootstrap_servers"] = tuple(s.strip() for s in servers.split(",") if s.strip())
        return cls(**values)  # type: ignore[arg-type]


def parse_static_voters(value: str, listener: str = "CONTROLLER") -> VoterSet:
    """Parse ``controller.quorum.voters`` (``1@host:9093,2@host2:9093``)."""
    nodes = []
    for item in value.split(","):
        item = item.strip()
        try:
            node, address = item.split("@", 1)
            host, port = address.rsplit(":", 1)
            endpoint = Endpoint(listener, host.strip("[]"), int(port))
            nodes.append(VoterNode(int(node), None, (endpoint,)))
        except ValueError as exc:
            raise ConfigError(f"controller.quorum.voters: bad entry {item!r}") from exc
    try:
        return VoterSet(tuple(nodes))
    except ValueError as exc:
        raise ConfigError(f"controller.quorum.voters: {exc}") from exc
