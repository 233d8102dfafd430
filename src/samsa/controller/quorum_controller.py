"""The QuorumController: requests in, records and responses out.

Kafka's ``QuorumController`` without its event loop: each operation reads the
committed ``MetadataImage`` and returns a ``ControllerResult`` (records to
append, the response to send once they commit).  It never changes the image.

The caller's contract (the node that runs the active controller):

1. Serialise writes.  Run one operation, append its records through Raft as
   one batch, wait for the commit, replay them into the image (``image.replay``
   or a ``MetadataDelta``), send the response; only then run the next write.
   Every operation except ``list_partition_reassignments`` and
   ``active_brokers`` is a write, ``poll`` included, even when it returns no
   records (heartbeat sessions are updated at once).
2. ``register_broker`` needs ``next_offset``: the offset its first record will
   have in the metadata log.  That offset becomes the broker epoch.
3. Call ``poll(now_ms)`` regularly (every few hundred ms; at least a few times
   per broker.session.timeout.ms): it fences brokers whose sessions expired,
   rebalances preferred leaders every leader.imbalance.check.interval, finishes
   reassignments, and elects leaders for partitions that can have one.
4. Call ``activate(now_ms)`` when this node becomes the active controller (a
   new controller gives every broker a fresh session instead of fencing them
   all for silence it did not witness).

Clocks are passed in; randomness (topic ids, placement) comes from the
``random.Random`` given at construction.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

from samsa.controller.brokers.cluster_control import ClusterControl
from samsa.controller.brokers.directory_assignment import assign_replicas_to_dirs
from samsa.controller.config_control import ConfigControl
from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.feature_control import FeatureControl
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import BrokerRegistration
from samsa.controller.partitions.alter_partition import AlterPartitionControl
from samsa.controller.partitions.reassignment import ReassignmentControl
from samsa.controller.partitions.replication_control import ReplicationControl
from samsa.controller.partitions.topic_control import TopicControl
from samsa.controller.pending import PendingChanges
from samsa.controller.producer_ids import allocate_producer_ids
from samsa.controller.security.acl_control import AclControl
from samsa.controller.security.client_quota_control import ClientQuotaControl
from samsa.controller.security.delegation_token_control import DelegationTokenControl
from samsa.controller.security.scram_control import ScramControl
from samsa.controller.steps import Steps
from samsa.errors import ErrorCode

log = logging.getLogger(__name__)

Request = Mapping[str, Any]


class QuorumController:
    """Facade over the control managers; one per active controller."""

    def __init__(
        self,
        image: MetadataImage,
        config: ControllerConfig | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.image = image
        self.config = config or ControllerConfig()
        self.rng = rng or random.Random()
        self.configs = ConfigControl(image, self.config)
        self.replication = ReplicationControl(image, self.configs)
        self.isr = AlterPartitionControl(image, self.configs)
        self.topics = TopicControl(image, self.config, self.configs, self.rng)
        self.cluster = ClusterControl(image, self.config, self.replication)
        self.reassignments = ReassignmentControl(image, self.configs)
        self.scram = ScramControl(image)
        self.client_quotas = ClientQuotaControl(image)
        self._next_rebalance_ms: int | None = None
        self.acls = AclControl(image, self.rng)
        self.features = FeatureControl(image)
        self.tokens = DelegationTokenControl(image, self.config, self.rng)

    def activate(self, now_ms: int) -> None:
        """This node became the active controller at ``now_ms``."""
        self.cluster.activate(now_ms)
        self._next_rebalance_ms = now_ms + self.config.leader_imbalance_check_interval_ms

    # ------------------------------------------------------------------ topics and configs
    def create_topics(self, request: Request) -> ControllerResult:
        """CreateTopics request body -> CreateTopics response body (v2-v7 fields)."""
        return self.topics.create_topics(request)

    def create_topics_in_steps(self, request: Request) -> Steps[ControllerResult]:
        """``create_topics`` a slice of partitions at a time (see controller.steps)."""
        return self.topics.create_topics_in_steps(request)

    def delete_topics(self, request: Request) -> ControllerResult:
        """DeleteTopics by ``topic_names`` (v0-5) or ``topics`` (v6+)."""
        return self.topics.delete_topics(request)

    def create_partitions(self, request: Request) -> ControllerResult:
        return self.topics.create_partitions(request)

    def create_partitions_in_steps(self, request: Request) -> Steps[ControllerResult]:
        return self.topics.create_partitions_in_steps(request)

    def incremental_alter_configs(self, request: Request) -> ControllerResult:
        return self.configs.incremental_alter_configs(request)

    def alter_configs(self, request: Request) -> ControllerResult:
        return self.configs.alter_configs(request)

    def alter_client_quotas(self, request: Request) -> ControllerResult:
        return self.client_quotas.alter_client_quotas(request)

    def update_features(self, request: Request, version: int) -> ControllerResult:
        return self.features.update_features(request, version)

    def unregister_controller(self, request: Request, node_id: int) -> ControllerResult:
        """UnregisterController (KIP-1187), as Kafka answers it at Samsa's
        metadata.version (4.1-IV1), which keeps no controller registrations."""
        if request["controller_id"] == node_id:
            code, message = (
                ErrorCode.INVALID_REQUEST,
                "Controller cannot unregister itself while it is active.",
            )
        else:
            code, message = (
                ErrorCode.UNSUPPORTED_VERSION,
                "The current MetadataVersion is too old to support controller unregistration.",
            )
        return ControllerResult(
            [], {"throttle_time_ms": 0, "error_code": code, "error_message": message}
        )

    def allocate_producer_ids(self, request: Request) -> ControllerResult:
        return allocate_producer_ids(self.image, request)

    def alter_user_scram_credentials(self, request: Request) -> ControllerResult:
        return self.scram.alter_credentials(request)

    # ------------------------------------------------------------------ delegation tokens
    def create_delegation_token(
        self, request: Request, requester: str, wall_ms: int
    ) -> ControllerResult:
        """``requester``: the principal asking (``User:alice``); ``wall_ms``: the
        wall clock, which token timestamps are (brokers compare them to theirs)."""
        return self.tokens.create(request, requester, wall_ms)

    def renew_delegation_token(
        self, request: Request, requester: str, wall_ms: int
    ) -> ControllerResult:
        return self.tokens.renew(request, requester, wall_ms)

    def expire_delegation_token(
        self, request: Request, requester: str, wall_ms: int
    ) -> ControllerResult:
        return self.tokens.expire(request, requester, wall_ms)

    # ------------------------------------------------------------------ ACLs
    def create_acls(self, request: Request) -> ControllerResult:
        return self.acls.create_acls(request)

    def delete_acls(self, request: Request) -> ControllerResult:
        return self.acls.delete_acls(request)

    # ------------------------------------------------------------------ brokers
    def register_broker(self, request: Request, next_offset: int, now_ms: int) -> ControllerResult:
        """BrokerRegistration; ``next_offset`` is the offset the first record will get."""
        return self.cluster.register_broker(request, next_offset, now_ms)

    def broker_heartbeat(self, request: Request, now_ms: int) -> ControllerResult:
        return self.cluster.broker_heartbeat(request, now_ms)

    def unregister_broker(self, request: Request) -> ControllerResult:
        return self.cluster.unregister_broker(request)

    def active_brokers(self) -> list[BrokerRegistration]:
        """Registered brokers that are unfenced and not shutting down."""
        return self.image.active_brokers()

    # ------------------------------------------------------------------ partitions
    def alter_partition(self, request: Request) -> ControllerResult:
        return self.isr.alter_partition(request)

    def assign_replicas_to_dirs(self, request: Request) -> ControllerResult:
        return assign_replicas_to_dirs(self.image, request)

    def elect_leaders(self, request: Request) -> ControllerResult:
        return self.replication.elect_leaders(request)

    def alter_partition_reassignments(self, request: Request) -> ControllerResult:
        return self.reassignments.alter_partition_reassignments(request)

    def list_partition_reassignments(self, request: Request) -> ControllerResult:
        """A read: no records, answer at once."""
        return self.reassignments.list_partition_reassignments(request)

    # ------------------------------------------------------------------ timed work
    def poll(self, now_ms: int, wall_ms: int | None = None) -> ControllerResult:
        """Timed work: fence expired sessions, finish reassignments, elect leaders
        where possible, (every leader.imbalance.check.interval) move leadership
        back to preferred replicas, and (every
        delegation.token.expiry.check.interval.ms, by the wall clock ``wall_ms``)
        remove expired delegation tokens.  Not atomic (see ControllerResult)."""
        pending = PendingChanges(self.image)
        self.cluster.fence_stale_brokers(pending, now_ms)
        self.replication.complete_reassignments(pending)
        self.replication.elect_leaderless(pending, "partitions without a leader")
        if self._next_rebalance_ms is None:
            self._next_rebalance_ms = now_ms + self.config.leader_imbalance_check_interval_ms
        elif now_ms >= self._next_rebalance_ms:
            self._next_rebalance_ms = now_ms + self.config.leader_imbalance_check_interval_ms
            if self.config.auto_leader_rebalance_enable:
                self.replication.rebalance_leaders(
                    pending, self.config.leader_imbalance_per_broker_percentage
                )
        # Non-atomic, as Kafka's: each change is a complete leader/ISR state, a
        # prefix of them is a valid image, and a broker's fence record comes
        # after its partitions' changes, so a failover between two batches
        # leaves it unfenced and the next controller fences it again.
        records = pending.records
        if wall_ms is not None:
            records = [*records, *self.tokens.sweep(wall_ms)]
        return ControllerResult(records, None, atomic=False)
