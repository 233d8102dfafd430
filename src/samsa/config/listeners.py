"""Kafka's listener and quorum address notations, parsed once.

``listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093`` names each
socket a node binds; ``controller.listener.names`` says which of them serve the
controller quorum; ``advertised.listeners`` what other nodes and clients are
told.  ``controller.quorum.voters=1@host:9093,2@host:9093`` is the static voter
set, ``controller.quorum.bootstrap.servers=host:9093,...`` where a node looks
for the quorum when the voter set lives in the metadata log (Kafka 4's
dynamic quorum).  A bare ``HOST:PORT`` (what ``--listen`` has always taken) is a
PLAINTEXT listener, so the single-node command line keeps working as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.errors import ConfigError

DEFAULT_LISTENER_NAME = "PLAINTEXT"


@dataclass(frozen=True, slots=True)
class Listener:
    name: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class QuorumVoter:
    node_id: int
    host: str
    port: int


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def parse_address(text: str, what: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"{what}: expected HOST:PORT, got {text!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


def parse_listeners(value: str, key: str = "listeners") -> list[Listener]:
    """``NAME://HOST:PORT,...`` (a bare ``HOST:PORT`` is PLAINTEXT)."""
    listeners: list[Listener] = []
    for entry in _split(value):
        name, sep, rest = entry.partition("://")
        if not sep:
            name, rest = DEFAULT_LISTENER_NAME, entry
        name = name.strip().upper()
        if not name.replace("_", "").isalnum():
            raise ConfigError(f"{key}: bad listener name {name!r} in {entry!r}")
        host, port = parse_address(rest, key)
        if any(existing.name == name for existing in listeners):
            raise ConfigError(f"{key}: listener name {name} appears twice")
        listeners.append(Listener(name, host, port))
    if not listeners and key == "listeners":
        raise ConfigError("listeners: at least one listener is needed")
    return listeners


def parse_voters(value: str) -> list[QuorumVoter]:
    """``controller.quorum.voters``: ``ID@HOST:PORT,...``."""
    voters: list[QuorumVoter] = []
    for entry in _split(value):
        node, sep, address = entry.partition("@")
        if not sep or not node.strip().isdigit():
            raise ConfigError(f"controller.quorum.voters: expected ID@HOST:PORT, got {entry!r}")
        host, port = parse_address(address, "controller.quorum.voters")
        if any(v.node_id == int(node) for v in voters):
            raise ConfigError(f"controller.quorum.voters: node {node} appears twice")
        voters.append(QuorumVoter(int(node), host, port))
    return voters


def parse_bootstrap_servers(value: str) -> list[tuple[str, int]]:
    return [parse_address(entry, "controller.quorum.bootstrap.servers") for entry in _split(value)]


def parse_roles(value: str) -> frozenset[str]:
    roles = frozenset(r.lower() for r in _split(value))
    unknown = roles - {"broker", "controller"}
    if unknown or not roles:
        raise ConfigError(f"process.roles: expected broker, controller or both, got {value!r}")
    return roles


def parse_names(value: str) -> list[str]:
    return [name.upper() for name in _split(value)]
