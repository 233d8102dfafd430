"""From a partition registration and what should change to one PartitionChangeRecord.

Kafka's ``PartitionChangeBuilder``, as one function: the caller says what it
wants (a new ISR, new target replicas with adding/removing lists, an election
type, a leader recovery state) and which brokers may lead; the builder works out
the leader and returns the record that gets there, or None when nothing would
change.  Every path that moves leaders or ISRs in the controller goes through it,
so the rules live in one place:

1. A reassignment completes as soon as the target ISR holds every target
   replica: the removed replicas leave replicas and ISR, the adding/removing
   lists empty (Kafka's ``PartitionReassignmentReplicas.maybeCompleteReassignment``).
2. Leader: the current leader stays while it is in the target ISR and
   acceptable (no-op selector); otherwise the offline selector picks the first
   acceptable in-sync replica in replica order; a PREFERRED election tries the
   preferred replica first; an UNCLEAN one falls back to any acceptable replica,
   makes the ISR that leader alone and marks the partition RECOVERING.
3. A reassignment that drops a replica bumps the leader epoch even when the
   leader stays (the record names the same leader), so the old replica's fetches
   are fenced.
4. The ISR is never written empty (eligible leader replicas are not
   implemented): when the last in-sync replica goes, the partition keeps it in
   the ISR and has no leader, as Kafka does without ELR.
5. Epochs are not in the record: replay bumps the partition epoch on every
   record and the leader epoch when the record names a leader.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from samsa.controller.image.registrations import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    NO_RECOVERY_STATE_CHANGE,
    LeaderRecoveryState,
    PartitionRegistration,
)
from samsa.controller.partitions.leader_selectors import offline_leader, preferred_leader
from samsa.protocol.metadata_records import MetadataRecord, make_record

log = logging.getLogger(__name__)


class Election(Enum):
    """Kafka's ``PartitionChangeBuilder.Election``."""

    PREFERRED = "preferred"
    """Elect the preferred replica if it is in the ISR; else keep a valid leader."""
    ONLINE = "online"
    """Keep the partition online with a leader from the ISR."""
    UNCLEAN = "unclean"
    """As ONLINE, but take a replica outside the ISR rather than have no leader."""


def _complete_reassignment(
    target_isr: list[int],
    target_replicas: list[int],
    removing: list[int],
    adding: list[int],
) -> tuple[list[int], list[int]] | None:
    """The (replicas, ISR) once a reassignment completes, or None while it cannot."""
    if not removing and not adding:
        return None
    new_isr, new_replicas = target_isr, target_replicas
    if removing:
        new_isr = [r for r in target_isr if r not in removing]
        new_replicas = [r for r in target_replicas if r not in removing]
        if not new_isr or not new_replicas:
            return None
    if not all(r in new_isr for r in new_replicas):
        return None
    return new_replicas, new_isr


def build_partition_change(
    registration: PartitionRegistration,
    topic_id: bytes,
    partition_id: int,
    is_acceptable_leader: Callable[[int], bool],
    *,
    target_isr: Sequence[int] | None = None,
    target_replicas: Sequence[int] | None = None,
    target_removing: Sequence[int] | None = None,
    target_adding: Sequence[int] | None = None,
    election: Election = Election.ONLINE,
    target_leader_recovery_state: int | None = None,
    description: str = "",
) -> MetadataRecord | None:
    """The PartitionChangeRecord that takes ``registration`` to the targets, or None.

    Targets left as None keep the registration's value.  ``is_acceptable_leader``
    says which brokers may lead (for the controller: active brokers, minus one
    being fenced or shut down).  ``description`` names the partition in logs.
    """
    isr = list(registration.isr if target_isr is None else target_isr)
    replicas = list(registration.replicas if target_replicas is None else target_replicas)
    removing = list(registration.removing_replicas if target_removing is None else target_removing)
    adding = list(registration.adding_replicas if target_adding is None else target_adding)

    completed = _complete_reassignment(isr, replicas, removing, adding)
    if completed is not None:
        replicas, isr = completed
        removing, adding = [], []

    fields: dict[str, Any] = {}
    current = registration.leader
    if not (current in isr and is_acceptable_leader(current)):
        current = NO_LEADER  # the current leader cannot stay
    if election is Election.PREFERRED:
        choice = preferred_leader(replicas, isr, is_acceptable_leader)
        if not choice.has_leader and current != NO_LEADER:
            choice = preferred_leader([current], isr, is_acceptable_leader)
        if not choice.has_leader:
            choice = offline_leader(replicas, isr, is_acceptable_leader)
    elif current != NO_LEADER:
        choice = preferred_leader([current], isr, is_acceptable_leader)  # no-op: keep it
    else:
        choice = offline_leader(
            replicas, isr, is_acceptable_leader, unclean_allowed=election is Election.UNCLEAN
        )
    if choice.leader != registration.leader:
        fields["leader"] = choice.leader
        if choice.unclean:
            log.warning(
                "unclean leader election for %s: broker %d leads from outside the ISR %s; "
                "records acknowledged by that ISR may be lost",
                description or f"partition {partition_id}",
                choice.leader,
                list(registration.isr),
            )
            fields["isr"] = [choice.leader]
            if registration.leader_recovery_state != LeaderRecoveryState.RECOVERING:
                fields["leader_recovery_state"] = LeaderRecoveryState.RECOVERING

    if "leader" not in fields and not all(r in replicas for r in registration.replicas):
        fields["leader"] = registration.leader  # a replica leaves: fence it by epoch

    if "isr" not in fields and isr and tuple(isr) != registration.isr:
        fields["isr"] = isr

    if replicas and tuple(replicas) != registration.replicas:
        fields["replicas"] = replicas
    if tuple(removing) != registration.removing_replicas:
        fields["removing_replicas"] = removing
    if tuple(adding) != registration.adding_replicas:
        fields["adding_replicas"] = adding

    if (
        target_leader_recovery_state is not None
        and target_leader_recovery_state != NO_RECOVERY_STATE_CHANGE
        and target_leader_recovery_state != registration.leader_recovery_state
        and "leader_recovery_state" not in fields
    ):
        fields["leader_recovery_state"] = target_leader_recovery_state

    if not fields:
        return None
    return make_record(
        "PartitionChangeRecord", topic_id=topic_id, partition_id=partition_id, **fields
    )


def is_noop(change: MetadataRecord) -> bool:
    """Whether a PartitionChangeRecord changes nothing but the partition epoch."""
    body = change.body
    return (
        body.get("leader", NO_LEADER_CHANGE) == NO_LEADER_CHANGE
        and body.get("leader_recovery_state", NO_RECOVERY_STATE_CHANGE) == NO_RECOVERY_STATE_CHANGE
        and all(
            body.get(name) is None
            for name in ("isr", "replicas", "removing_replicas", "adding_replicas")
        )
    )
