"""Leaders and ISRs: moving them when brokers come and go, and leader elections.

Part of Kafka's ``ReplicationControlManager`` (topic creation, AlterPartition
and reassignment live in their own modules).  Every change goes through the
partition change builder; this module decides *which* partitions to look at and
with what targets, using the image's broker -> partitions index so that fencing
one broker of a 100,000-partition cluster touches only that broker's partitions.

* ``leader_and_isr_updates``: take a broker out of ISRs and leaderships (fenced,
  shutting down, unregistered, re-registered) or let a returning broker lead
  leaderless partitions.  A topic with unclean.leader.election.enable may get an
  unclean leader here (logged as possible data loss).
* ``elect_leaders``: preferred or unclean elections on request.
* ``rebalance_leaders``: the periodic preferred-leader rebalance.
* ``complete_reassignments``: finish moves whose targets are all in sync.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.controller.config_control import ConfigControl
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import NO_LEADER
from samsa.controller.partitions.partition_change import Election, build_partition_change
from samsa.controller.pending import PendingChanges
from samsa.errors import ErrorCode

log = logging.getLogger(__name__)

ELECTION_PREFERRED = 0
ELECTION_UNCLEAN = 1


class ReplicationControl:
    """Leader and ISR changes computed over the committed image."""

    def __init__(self, image: MetadataImage, configs: ConfigControl) -> None:
        self.image = image
        self.configs = configs

    def _describe(self, topic_id: bytes, partition_id: int) -> str:
        topic = self.image.topics_by_id.get(topic_id)
        return f"{topic.name if topic else topic_id.hex()}-{partition_id}"

    def _topic_name(self, topic_id: bytes) -> str:
        topic = self.image.topics_by_id.get(topic_id)
        return "" if topic is None else topic.name

    # ------------------------------------------------------------------ broker moves
    def leader_and_isr_updates(
        self,
        pending: PendingChanges,
        partitions: Iterable[tuple[bytes, int]],
        *,
        broker_to_remove: int = NO_LEADER,
        broker_to_add: int = NO_LEADER,
        context: str,
    ) -> int:
        """Append changes for ``partitions``: ``broker_to_remove`` leaves each ISR and
        may not lead; ``broker_to_add`` may lead even before its unfence is committed.
        Returns how many records were appended (Kafka's generateLeaderAndIsrUpdates)."""

        active: dict[int, bool] = {}  # no broker changes state within this loop

        def acceptable(replica: int) -> bool:
            if replica == broker_to_remove:
                return False
            if replica == broker_to_add:
                return True
            known = active.get(replica)
            if known is None:
                known = active[replica] = pending.is_active(replica)
            return known

        unclean_by_topic: dict[bytes, bool] = {}
        count = 0
        for topic_id, partition_id in partitions:
            registration = pending.partition(topic_id, partition_id)
            if registration is None:
                continue
            unclean = unclean_by_topic.get(topic_id)
            if unclean is None:
                name = self._topic_name(topic_id)
                unclean = unclean_by_topic[topic_id] = self.configs.unclean_leader_election_enabled(
                    name
                )
            target_isr = None
            if broker_to_remove != NO_LEADER and broker_to_remove in registration.isr:
                target_isr = [r for r in registration.isr if r != broker_to_remove]
            record = build_partition_change(
                registration,
                topic_id,
                partition_id,
                acceptable,
                target_isr=target_isr,
                election=Election.UNCLEAN if unclean else Election.ONLINE,
                description=self._describe(topic_id, partition_id),
            )
            if record is not None:
                pending.append(record)
                count += 1
        if count:
            log.info("%s: %d partition change(s)", context, count)
        return count

    def remove_broker(self, pending: PendingChanges, broker_id: int, context: str) -> int:
        """Take ``broker_id`` out of every ISR and leadership it holds, the
        partitions it leads first: they are offline until their change commits,
        while the others only lose a follower, and the timed work's records are
        replayed a step at a time (see ControllerResult.atomic), so a fenced broker of
        10,000 partitions has its ~3,300 leaderships moved before its ~6,700
        ISR-only shrinks instead of spread among them."""
        # A leader is always in its ISR, so the ISR index covers its leaderships too.
        partitions = pending.partitions_with_broker_in_isr(broker_id)
        led = set(self.image.brokers_to_isrs.partitions_led_by(broker_id))
        partitions.sort(key=lambda key: key not in led)  # stable: leaderships first
        return self.leader_and_isr_updates(
            pending, partitions, broker_to_remove=broker_id, context=context
        )

    def elect_leaderless(
        self, pending: PendingChanges, context: str, broker_to_add: int = NO_LEADER
    ) -> int:
        """Give leaderless partitions a leader where an in-sync replica can lead.

        Runs on every poll, so partitions none of whose replicas can lead (all
        their brokers down) are skipped before the builder is asked."""

        def may_lead(replica: int) -> bool:
            return replica == broker_to_add or pending.is_active(replica)

        candidates = []
        for key in pending.partitions_without_leader():
            registration = pending.partition(*key)
            if registration is not None and any(may_lead(r) for r in registration.replicas):
                candidates.append(key)
        return self.leader_and_isr_updates(
            pending, candidates, broker_to_add=broker_to_add, context=context
        )

    # ------------------------------------------------------------------ ElectLeaders
    def elect_leaders(self, request: Mapping[str, Any]) -> ControllerResult:
        """ElectLeaders: preferred (0) or unclean (1); null partitions means all."""
        election_type = request.get("election_type", ELECTION_PREFERRED)
        if election_type not in (ELECTION_PREFERRED, ELECTION_UNCLEAN):
            return ControllerResult(
                [],
                {
                    "throttle_time_ms": 0,
                    "error_code": int(ErrorCode.INVALID_REQUEST),
                    "replica_election_results": [],
                },
            )
        pending = PendingChanges(self.image)
        results = []
        requested = request.get("topic_partitions")
        if requested is None:
            for topic in self.image.topics.values():
                partition_results = []
                for partition_id in topic.partitions:
                    code, message = self._elect_one(
                        pending, topic.name, partition_id, election_type
                    )
                    if code != ErrorCode.ELECTION_NOT_NEEDED:
                        partition_results.append(_election_result(partition_id, code, message))
                results.append({"topic": topic.name, "partition_result": partition_results})
        else:
            for entry in requested:
                partition_results = [
                    _election_result(p, *self._elect_one(pending, entry["topic"], p, election_type))
                    for p in entry["partitions"]
                ]
                results.append({"topic": entry["topic"], "partition_result": partition_results})
        response = {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": results}
        return ControllerResult(pending.records, response)

    def _elect_one(
        self, pending: PendingChanges, topic_name: str, partition_id: int, election_type: int
    ) -> tuple[ErrorCode, str | None]:
        topic = self.image.topics.get(topic_name)
        registration = None if topic is None else pending.partition(topic.topic_id, partition_id)
        if topic is None or registration is None:
            return (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"no such partition as {topic_name}-{partition_id}",
            )
        if election_type == ELECTION_PREFERRED and registration.has_preferred_leader:
            return ErrorCode.ELECTION_NOT_NEEDED, None
        if election_type == ELECTION_UNCLEAN and registration.has_leader:
            return ErrorCode.ELECTION_NOT_NEEDED, None
        record = build_partition_change(
            registration,
            topic.topic_id,
            partition_id,
            pending.is_active,
            election=Election.PREFERRED
            if election_type == ELECTION_PREFERRED
            else Election.UNCLEAN,
            description=f"{topic_name}-{partition_id}",
        )
        if record is None:
            if election_type == ELECTION_PREFERRED:
                return (
                    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                    f"preferred replica {registration.preferred_replica} of "
                    f"{topic_name}-{partition_id} is not live and in sync",
                )
            return (
                ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                f"no live replica of {topic_name}-{partition_id} can lead",
            )
        pending.append(record)
        return ErrorCode.NONE, None

    # ------------------------------------------------------------------ rebalance
    def rebalance_leaders(self, pending: PendingChanges, imbalance_percentage: int) -> int:
        """Preferred elections for brokers whose leader imbalance exceeds the limit.

        A broker's imbalance is the share of the partitions it is preferred for
        that it does not lead (ZooKeeper-era Kafka's check, per broker).  Only
        partitions whose preferred replica is active and in sync move.
        """
        by_preferred: dict[int, list[tuple[bytes, int]]] = {}
        for key in self.image.imbalanced:
            registration = self.image.partition(*key)
            if registration is None or not registration.replicas:
                continue
            by_preferred.setdefault(registration.replicas[0], []).append(key)
        candidates = {b: keys for b, keys in by_preferred.items() if self.image.is_active(b)}
        if not candidates:
            return 0
        totals = dict.fromkeys(candidates, 0)
        for _, _, registration in self.image.iter_partitions():
            if registration.replicas and registration.replicas[0] in totals:
                totals[registration.replicas[0]] += 1
        count = 0
        for broker_id, keys in sorted(candidates.items()):
            ratio = len(keys) / totals[broker_id]
            if ratio * 100 <= imbalance_percentage:
                continue
            log.info(
                "broker %d leads %d of the %d partitions it is preferred for: rebalancing",
                broker_id,
                totals[broker_id] - len(keys),
                totals[broker_id],
            )
            for topic_id, partition_id in sorted(keys):
                count += self._preferred_election(pending, topic_id, partition_id)
        return count

    def _preferred_election(
        self, pending: PendingChanges, topic_id: bytes, partition_id: int
    ) -> int:
        registration = pending.partition(topic_id, partition_id)
        if registration is None or registration.has_preferred_leader:
            return 0
        preferred = registration.preferred_replica
        if preferred not in registration.isr or not pending.is_active(preferred):
            return 0
        record = build_partition_change(
            registration,
            topic_id,
            partition_id,
            pending.is_active,
            election=Election.PREFERRED,
            description=self._describe(topic_id, partition_id),
        )
        if record is None:
            return 0
        pending.append(record)
        return 1

    def complete_reassignments(self, pending: PendingChanges) -> int:
        """Finish reassignments whose target replicas are all in the ISR already."""
        count = 0
        for topic_id, partition_id in sorted(self.image.reassigning):
            registration = pending.partition(topic_id, partition_id)
            if registration is None or not registration.is_reassigning:
                continue
            record = build_partition_change(
                registration,
                topic_id,
                partition_id,
                pending.is_active,
                description=self._describe(topic_id, partition_id),
            )
            if record is not None:
                pending.append(record)
                count += 1
        return count


def _election_result(partition_id: int, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"partition_id": partition_id, "error_code": int(code), "error_message": message}
