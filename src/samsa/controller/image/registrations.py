"""The registrations the metadata image holds: partitions and brokers.

A ``PartitionRegistration`` is one partition's replica assignment, ISR, leader
and epochs, as Kafka's ``PartitionRegistration``.  It is immutable by contract:
every change builds a new one (``merge`` of a PartitionChangeRecord), so a
metadata delta can keep the registration from before a batch and the image can
swap the new one in.  It is a slotted class of tuples and ints rather than a
dataclass because a cluster holds 100,000 of them: this shape costs a few
hundred bytes each and builds fast on replay.

Epoch rules (Kafka's ``PartitionRegistration.merge``): every change record bumps
the partition epoch by one; a record that names a leader (anything but
``NO_LEADER_CHANGE``, even the same leader) also bumps the leader epoch.  The
partition change builder decides when to name the leader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

NO_LEADER = -1
"""The leader field of a partition that has no leader."""

NO_LEADER_CHANGE = -2
"""The leader field of a PartitionChangeRecord that leaves the leader as it is."""


class LeaderRecoveryState(IntEnum):
    """Kafka's LeaderRecoveryState: RECOVERING after an unclean election until the
    leader has rebuilt its log state; the ISR may not grow past the leader then."""

    RECOVERED = 0
    RECOVERING = 1


NO_RECOVERY_STATE_CHANGE = -1
"""The leader_recovery_state field of a PartitionChangeRecord that changes nothing."""


UNASSIGNED_DIRECTORY = b"\x00" * 16
"""Kafka's DirectoryId.UNASSIGNED: a replica whose log dir is not known yet."""


def _replica_tuple(value: Sequence[int] | None) -> tuple[int, ...]:
    return tuple(value) if value else ()


def _directory_tuple(value: Sequence[bytes] | None) -> tuple[bytes, ...]:
    return tuple(bytes(d) for d in value) if value else ()


class PartitionRegistration:
    """One partition's assignment and leadership; never mutated after construction."""

    __slots__ = (
        "adding_replicas",
        "directories",
        "isr",
        "leader",
        "leader_epoch",
        "leader_recovery_state",
        "partition_epoch",
        "removing_replicas",
        "replicas",
    )

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    leader_recovery_state: int
    directories: tuple[bytes, ...]
    """Each replica's log dir id (KIP-858), in ``replicas`` order; empty while unknown."""

    def __init__(
        self,
        replicas: tuple[int, ...],
        isr: tuple[int, ...],
        leader: int,
        leader_epoch: int = 0,
        partition_epoch: int = 0,
        *,
        removing_replicas: tuple[int, ...] = (),
        adding_replicas: tuple[int, ...] = (),
        leader_recovery_state: int = LeaderRecoveryState.RECOVERED,
        directories: tuple[bytes, ...] = (),
    ) -> None:
        self.replicas = replicas
        # Share the replicas tuple when the ISR is the same: most partitions are
        # fully in sync, and this halves their tuple memory.
        self.isr = replicas if isr == replicas else isr
        self.removing_replicas = removing_replicas
        self.adding_replicas = adding_replicas
        self.leader = leader
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch
        self.leader_recovery_state = int(leader_recovery_state)
        self.directories = directories

    @classmethod
    def from_record(cls, body: Mapping[str, Any]) -> PartitionRegistration:
        """From a PartitionRecord body (snake_case of Kafka's field names)."""
        return cls(
            tuple(body["replicas"]),
            tuple(body["isr"]),
            body["leader"],
            body["leader_epoch"],
            body["partition_epoch"],
            removing_replicas=_replica_tuple(body.get("removing_replicas")),
            adding_replicas=_replica_tuple(body.get("adding_replicas")),
            leader_recovery_state=body.get("leader_recovery_state", 0),
            directories=_directory_tuple(body.get("directories")),
        )

    def merge(self, change: Mapping[str, Any]) -> PartitionRegistration:
        """The registration after a PartitionChangeRecord body.

        Absent or null fields, leader -2 and leader_recovery_state -1 mean
        "unchanged".  The partition epoch always moves; the leader epoch moves
        when the record names a leader.
        """
        replicas = change.get("replicas")
        isr = change.get("isr")
        removing = change.get("removing_replicas")
        adding = change.get("adding_replicas")
        leader = change.get("leader", NO_LEADER_CHANGE)
        recovery = change.get("leader_recovery_state", NO_RECOVERY_STATE_CHANGE)
        directories = change.get("directories")
        if leader == NO_LEADER_CHANGE:
            new_leader, new_leader_epoch = self.leader, self.leader_epoch
        else:
            new_leader, new_leader_epoch = leader, self.leader_epoch + 1
        return PartitionRegistration(
            self.replicas if replicas is None else tuple(replicas),
            self.isr if isr is None else tuple(isr),
            new_leader,
            new_leader_epoch,
            self.partition_epoch + 1,
            removing_replicas=self.removing_replicas if removing is None else tuple(removing),
            adding_replicas=self.adding_replicas if adding is None else tuple(adding),
            leader_recovery_state=(
                self.leader_recovery_state if recovery == NO_RECOVERY_STATE_CHANGE else recovery
            ),
            directories=(
                self._directories_after(replicas)
                if directories is None
                else _directory_tuple(directories)
            ),
        )

    def _directories_after(self, replicas: list[int] | None) -> tuple[bytes, ...]:
        """Directories stay with their replicas when the replicas change; a new
        replica's dir is unknown until its broker assigns it."""
        if replicas is None or not self.directories:
            return self.directories
        known = dict(zip(self.replicas, self.directories, strict=False))
        return tuple(known.get(r, UNASSIGNED_DIRECTORY) for r in replicas)

    def directory_of(self, broker_id: int) -> bytes | None:
        """The log dir holding ``broker_id``'s replica, or None while unknown."""
        if broker_id not in self.replicas or len(self.directories) != len(self.replicas):
            return None
        directory = self.directories[self.replicas.index(broker_id)]
        return None if directory == UNASSIGNED_DIRECTORY else directory

    def record_fields(self) -> dict[str, Any]:
        """The PartitionRecord fields (without topic and partition ids) that rebuild
        this registration; lists, as the record codec takes them."""
        return {
            "replicas": list(self.replicas),
            "isr": list(self.isr),
            "removing_replicas": list(self.removing_replicas),
            "adding_replicas": list(self.adding_replicas),
            "leader": self.leader,
            "leader_recovery_state": self.leader_recovery_state,
            "leader_epoch": self.leader_epoch,
            "partition_epoch": self.partition_epoch,
            "directories": list(self.directories),
        }

    @property
    def preferred_replica(self) -> int:
        return self.replicas[0] if self.replicas else NO_LEADER

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    @property
    def has_preferred_leader(self) -> bool:
        return self.leader == self.preferred_replica

    @property
    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas or self.adding_replicas)

    def election_was_clean(self, previous_isr: Sequence[int]) -> bool:
        """Whether this registration's leader came from ``previous_isr`` (or none)."""
        return self.leader == NO_LEADER or self.leader in previous_isr

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartitionRegistration):
            return NotImplemented
        return (
            self.replicas == other.replicas
            and self.isr == other.isr
            and self.leader == other.leader
            and self.leader_epoch == other.leader_epoch
            and self.partition_epoch == other.partition_epoch
            and self.removing_replicas == other.removing_replicas
            and self.adding_replicas == other.adding_replicas
            and self.leader_recovery_state == other.leader_recovery_state
            and self.directories == other.directories
        )

    def __hash__(self) -> int:
        return hash((self.replicas, self.isr, self.leader, self.leader_epoch, self.partition_epoch))

    def __repr__(self) -> str:
        extra = ""
        if self.removing_replicas or self.adding_replicas:
            extra = (
                f", removing={list(self.removing_replicas)}, adding={list(self.adding_replicas)}"
            )
        if self.leader_recovery_state:
            extra += ", RECOVERING"
        return (
            f"PartitionRegistration(replicas={list(self.replicas)}, isr={list(self.isr)}, "
            f"leader={self.leader}, leader_epoch={self.leader_epoch}, "
            f"partition_epoch={self.partition_epoch}{extra})"
        )

    def diff(self, previous: PartitionRegistration) -> str:
        """What changed since ``previous``, for the log ("isr: [1, 2] -> [1]")."""
        parts = []
        for name in self.__slots__:
            old, new = getattr(previous, name), getattr(self, name)
            if old != new:
                if isinstance(old, tuple):
                    old, new = list(old), list(new)
                parts.append(f"{name}: {old} -> {new}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One listener of a broker, as RegisterBrokerRecord's EndPoints."""

    name: str
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True, slots=True)
class BrokerFeature:
    """A feature range a broker supports, as RegisterBrokerRecord's Features."""

    name: str
    min_supported_version: int
    max_supported_version: int


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """A registered broker, as Kafka's ``BrokerRegistration``.

    ``epoch`` is the broker epoch: the offset of the RegisterBrokerRecord that
    created this registration.  A new registration of the same id replaces the
    old one whole.
    """

    id: int
    epoch: int
    incarnation_id: bytes
    listeners: tuple[Endpoint, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    features: tuple[BrokerFeature, ...] = ()

    @property
    def is_active(self) -> bool:
        """Unfenced and not shutting down: may lead partitions and join ISRs."""
        return not self.fenced and not self.in_controlled_shutdown

    def listener(self, name: str) -> Endpoint | None:
        for endpoint in self.listeners:
            if endpoint.name == name:
                return endpoint
        return None

    @classmethod
    def from_record(cls, body: Mapping[str, Any]) -> BrokerRegistration:
        """From a RegisterBrokerRecord body."""
        return cls(
            id=body["broker_id"],
            epoch=body["broker_epoch"],
            incarnation_id=bytes(body["incarnation_id"]),
            listeners=tuple(
                Endpoint(e["name"], e["host"], e["port"], e["security_protocol"])
                for e in body.get("end_points") or ()
            ),
            rack=body.get("rack"),
            fenced=bool(body.get("fenced", True)),
            in_controlled_shutdown=bool(body.get("in_controlled_shutdown", False)),
            features=tuple(
                BrokerFeature(f["name"], f["min_supported_version"], f["max_supported_version"])
                for f in body.get("features") or ()
            ),
        )

    def record_fields(self) -> dict[str, Any]:
        """The RegisterBrokerRecord fields that rebuild this registration."""
        return {
            "broker_id": self.id,
            "incarnation_id": self.incarnation_id,
            "broker_epoch": self.epoch,
            "end_points": [
                {
                    "name": e.name,
                    "host": e.host,
                    "port": e.port,
                    "security_protocol": e.security_protocol,
                }
                for e in self.listeners
            ],
            "features": [
                {
                    "name": f.name,
                    "min_supported_version": f.min_supported_version,
                    "max_supported_version": f.max_supported_version,
                }
                for f in self.features
            ],
            "rack": self.rack,
            "fenced": self.fenced,
            "in_controlled_shutdown": self.in_controlled_shutdown,
        }
