"""Samsa's client group membership, speaking the registry's protocol (``election`` drives it).

Imported only on the election's thread (the client library is heavy to import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.client.consumer.membership.group import GroupMembership
from samsa.client.consumer.network import ConsumerNetworkClient
from samsa.registry.node.identity import PROTOCOL_NAME, PROTOCOL_TYPE

if TYPE_CHECKING:
    from samsa.registry.node.election import Election


class RegistryMember(GroupMembership):
    protocol_type = PROTOCOL_TYPE

    def __init__(
        self, client: ConsumerNetworkClient, cfg: dict[str, Any], election: Election
    ) -> None:
        super().__init__(client, cfg)
        self.election = election

    def join_metadata(self) -> list[tuple[str, bytes]]:
        return [(PROTOCOL_NAME, self.election.metadata(self.member_id))]

    def perform_assignment(
        self, protocol: str, members: list[dict[str, Any]], deadline_ms: int
    ) -> dict[str, bytes]:
        return self.election.assign(members)

    def on_join_prepare(self) -> None:
        """A rebalance begins: nobody is primary until it ends."""
        self.election.revoked()

    def on_join_complete(self, protocol: str, assignment: bytes) -> None:
        self.election.assigned(assignment, self.member_id, self.generation_id)

    def on_partitions_lost(self) -> None:
        """Fenced out of the group (heartbeat thread): stop acting as primary at once."""
        self.election.revoked()
