"""The voter set and its history along the log (KIP-853).

Invariants this module keeps:

* A ``VoterSet`` is immutable and ordered by node id, so iterating it never
  depends on hash order and the simulator replays identically.
* ``VoterSetHistory`` knows the voter set in force at every offset of the local
  log: a base (static ``controller.quorum.voters``, a bootstrap set, or the set
  stored in the snapshot the log starts from) plus one item per ``Voters`` entry.
  A node uses the *latest* item, committed or not, as Raft's single-server
  membership change requires; truncating the log drops the items above the
  truncation point, so an uncommitted change is reverted with its entry.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from samsa.raft.endpoint import Endpoint

__all__ = ["VoterNode", "VoterSet", "VoterSetHistory"]


@dataclass(frozen=True, slots=True)
class VoterNode:
    """One voter: its id, its log directory id (KIP-853 ReplicaKey) and its listeners."""

    node_id: int
    directory_id: uuid.UUID | None = None
    endpoints: tuple[Endpoint, ...] = ()

    def matches(self, node_id: int, directory_id: uuid.UUID | None) -> bool:
        """Kafka's ReplicaKey match: ids equal, and directory ids equal when this one is known."""
        if node_id != self.node_id:
            return False
        return self.directory_id is None or self.directory_id == directory_id


@dataclass(frozen=True, slots=True)
class VoterSet:
    """An immutable set of voters, ordered by node id."""

    nodes: tuple[VoterNode, ...] = ()

    def __post_init__(self) -> None:
        ids = [node.node_id for node in self.nodes]
        if ids != sorted(set(ids)):
            object.__setattr__(self, "nodes", tuple(sorted(self.nodes, key=lambda n: n.node_id)))
            if len({node.node_id for node in self.nodes}) != len(self.nodes):
                raise ValueError(f"duplicate voter ids in {ids}")

    @classmethod
    def of(cls, node_ids: Iterable[int]) -> VoterSet:
        """A voter set from bare ids (no directory ids, no endpoints): tests and static config."""
        return cls(tuple(VoterNode(node_id) for node_id in sorted(set(node_ids))))

    def __iter__(self) -> Iterator[VoterNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(node.node_id for node in self.nodes)

    @property
    def majority(self) -> int:
        """How many voters make a majority of this set."""
        return len(self.nodes) // 2 + 1

    def is_voter(self, node_id: int, directory_id: uuid.UUID | None = None) -> bool:
        node = self.get(node_id)
        return node is not None and node.matches(node_id, directory_id)

    def get(self, node_id: int) -> VoterNode | None:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        return None

    def is_only_voter(self, node_id: int) -> bool:
        return self.ids == (node_id,)

    def with_voter(self, node: VoterNode) -> VoterSet:
        if self.get(node.node_id) is not None:
            raise ValueError(f"node {node.node_id} is already a voter")
        return VoterSet((*self.nodes, node))

    def without_voter(self, node_id: int) -> VoterSet:
        if self.get(node_id) is None:
            raise ValueError(f"node {node_id} is not a voter")
        return VoterSet(tuple(node for node in self.nodes if node.node_id != node_id))

    def __str__(self) -> str:
        return "{" + ",".join(str(node_id) for node_id in self.ids) + "}"


@dataclass(slots=True)
class VoterSetHistory:
    """The voter set at each offset of the local log (see the module doc).

    ``base`` is the set before any ``Voters`` entry of the log: static voters,
    bootstrap voters, or the snapshot's set; ``None`` when the node knows no voter
    set yet (an observer that has not replicated one).
    """

    base: VoterSet | None = None
    entries: list[tuple[int, VoterSet]] = field(default_factory=list)

    def latest(self) -> VoterSet:
        if self.entries:
            return self.entries[-1][1]
        return self.base if self.base is not None else VoterSet()

    def latest_offset(self) -> int | None:
        """Offset of the newest ``Voters`` entry, or ``None`` if the set comes from the base."""
        return self.entries[-1][0] if self.entries else None

    def at_offset(self, offset: int) -> VoterSet:
        """The set in force for the entry at ``offset`` (the newest item at or below it)."""
        for entry_offset, voter_set in reversed(self.entries):
            if entry_offset <= offset:
                return voter_set
        return self.base if self.base is not None else VoterSet()

    def add(self, offset: int, voter_set: VoterSet) -> None:
        if self.entries and offset <= self.entries[-1][0]:
            raise ValueError(f"voter set at {offset} is not after {self.entries[-1][0]}")
        self.entries.append((offset, voter_set))

    def truncate_new_entries(self, end_offset: int) -> None:
        """Forget the sets of entries at or above ``end_offset`` (they left the log)."""
        while self.entries and self.entries[-1][0] >= end_offset:
            self.entries.pop()

    def truncate_old_entries(self, start_offset: int) -> None:
        """Fold the sets below ``start_offset`` into the base (the log prefix became a snapshot)."""
        while self.entries and self.entries[0][0] < start_offset:
            self.base = self.entries.pop(0)[1]

    def reset(self, base: VoterSet | None) -> None:
        """Start over from ``base`` (a snapshot replaced the whole log)."""
        self.base = base
        self.entries.clear()
