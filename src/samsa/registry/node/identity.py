"""The registry group's member metadata and assignment, and who is chosen primary (sans-I/O).

Every registry node joins one classic Kafka group (``registry.group.id``,
protocol type ``sr``, protocol ``v0``), as Confluent Schema Registry's nodes
do, with its identity as member metadata in Confluent's JSON
(``SchemaRegistryIdentity``):

    {"version":1,"host":"h","port":8081,"master_eligibility":true,"scheme":"http","leader":false}

(``leader`` is Samsa's: the member says it is the primary now, so a rebalance
keeps it).  The member the coordinator makes group leader runs ``choose`` and
sends every member the same assignment, in Confluent's ``Assignment`` JSON:

    {"version":1,"error":0,"master":"<member id>","master_identity":{...}}

The primary is the eligible member that says it is primary now (if exactly
one does: a rebalance for a node joining does not move the role), else the
eligible member with the smallest URL.  Two members with one URL could not
forward to each other: the assignment then carries ``DUPLICATE_URLS`` and no
primary, and the log says to set ``registry.advertised.url``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PROTOCOL_TYPE = "sr"
PROTOCOL_NAME = "v0"
VERSION = 1
NO_ERROR = 0
DUPLICATE_URLS = 1


class IdentityError(ValueError):
    """Member metadata or an assignment that is not in the expected JSON."""


@dataclass(frozen=True)
class Identity:
    host: str
    port: int
    scheme: str = "http"
    eligible: bool = True
    leader: bool = False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "host": self.host,
            "port": self.port,
            "master_eligibility": self.eligible,
            "scheme": self.scheme,
            "leader": self.leader,
        }

    def encode(self) -> bytes:
        return json.dumps(self.to_json(), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, obj: object) -> Identity:
        if not isinstance(obj, dict):
            raise IdentityError("an identity must be a JSON object")
        host, port = obj.get("host"), obj.get("port")
        if not isinstance(host, str) or isinstance(port, bool) or not isinstance(port, int):
            raise IdentityError("an identity needs a string host and an integer port")
        scheme = obj.get("scheme") or "http"
        if not isinstance(scheme, str):
            raise IdentityError("scheme must be a string")
        return cls(
            host,
            port,
            scheme,
            bool(obj.get("master_eligibility", True)),
            bool(obj.get("leader", False)),
        )

    @classmethod
    def decode(cls, data: bytes) -> Identity:
        return cls.from_json(_load(data))


@dataclass(frozen=True)
class Assignment:
    """What every member learns from a rebalance: who is primary (None: nobody)."""

    error: int = NO_ERROR
    primary_member: str | None = None
    primary: Identity | None = None

    def encode(self) -> bytes:
        obj: dict[str, Any] = {"version": VERSION, "error": self.error}
        if self.primary_member is not None and self.primary is not None:
            obj["master"] = self.primary_member
            obj["master_identity"] = self.primary.to_json()
        return json.dumps(obj, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, data: bytes) -> Assignment:
        obj = _load(data)
        error = obj.get("error", NO_ERROR)
        if isinstance(error, bool) or not isinstance(error, int):
            raise IdentityError("assignment error must be an integer")
        member = obj.get("master")
        identity = obj.get("master_identity")
        if member is None or identity is None:
            return cls(error)
        if not isinstance(member, str):
            raise IdentityError("assignment master must be a member id")
        return cls(error, member, Identity.from_json(identity))


def choose(members: list[tuple[str, Identity]]) -> Assignment:
    """The assignment for a group of (member id, identity): see the module's docstring."""
    eligible = [(member, identity) for member, identity in members if identity.eligible]
    if len({identity.url for _, identity in members}) != len(members):
        return Assignment(DUPLICATE_URLS)
    if not eligible:
        return Assignment()
    claiming = [(m, i) for m, i in eligible if i.leader]
    if len(claiming) == 1:
        member, identity = claiming[0]
    else:
        member, identity = min(eligible, key=lambda item: item[1].url)
    return Assignment(NO_ERROR, member, identity)


def _load(data: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise IdentityError(f"not JSON: {e}") from e
    if not isinstance(obj, dict):
        raise IdentityError("not a JSON object")
    return obj
