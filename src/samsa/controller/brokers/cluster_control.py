"""Brokers joining, living and leaving: registration, heartbeats, fencing.

Kafka's ``ClusterControlManager`` with the heartbeat handling of its
``ReplicationControlManager``.  Hard state (registrations, fenced, in controlled
shutdown) is in the image and changes by records; sessions are in memory
(``BrokerHeartbeatManager``).

* Registration: a new registration is a RegisterBrokerRecord, fenced, whose
  offset is the broker epoch.  Another incarnation of an unfenced broker id
  whose session is still alive, or an incarnation this controller saw
  replaced, gets DUPLICATE_BROKER_REGISTRATION; a fenced broker (shut down
  cleanly, or fenced for a lapsed session) has no live session to protect.  A re-registering broker restarted, so it
  leaves every ISR it was in (it rejoins by catching up).
* Heartbeat: unfence once the broker has replayed past its registration; a
  wish to shut down moves every leadership off it (controlled-shutdown
  selector: the ISR loses the broker, a live in-sync replica leads) and grants
  the shutdown once it leads nothing and the other brokers have replayed past
  those changes.
* Fencing (session timeout, or asked): the broker leaves every ISR and
  leadership (offline selector; never below the last ISR member, which stays
  with leader -1).  Unfencing lets the broker lead partitions that had no leader.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from samsa.controller.brokers.broker_heartbeats import BrokerControlState, BrokerHeartbeatManager
from samsa.controller.brokers.directory_assignment import take_offline_dirs_out
from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.broker_replay import FENCE, UNFENCE
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import BrokerRegistration
from samsa.controller.partitions.replication_control import ReplicationControl
from samsa.controller.pending import PendingChanges
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import MetadataRecord, make_record

log = logging.getLogger(__name__)


class ClusterControl:
    """Broker lifecycle operations over the committed image."""

    def __init__(
        self,
        image: MetadataImage,
        config: ControllerConfig,
        replication: ReplicationControl,
    ) -> None:
        self.image = image
        self.config = config
        self.replication = replication
        self.heartbeats = BrokerHeartbeatManager(config.broker_session_timeout_ms)
        self._replaced_incarnations: dict[int, set[bytes]] = {}

    def activate(self, now_ms: int) -> None:
        """Become the active controller: every registered broker gets a fresh session."""
        self.heartbeats = BrokerHeartbeatManager(self.config.broker_session_timeout_ms)
        for broker_id in self.image.brokers:
            self.heartbeats.touch(broker_id, now_ms, heard=False)

    # ------------------------------------------------------------------ registration
    def register_broker(
        self, request: Mapping[str, Any], next_offset: int, now_ms: int
    ) -> ControllerResult:
        broker_id = request["broker_id"]
        incarnation = bytes(request["incarnation_id"])
        cluster_id = self.config.cluster_id
        if cluster_id is not None and request.get("cluster_id") != cluster_id:
            return _registration_error(
                ErrorCode.INCONSISTENT_CLUSTER_ID,
                f"expected cluster id {cluster_id}, got {request.get('cluster_id')}",
            )
        existing = self.image.brokers.get(broker_id)
        if incarnation in self._replaced_incarnations.get(broker_id, ()):
            log.warning(
                "refusing the registration of broker %d: incarnation %s was replaced",
                broker_id,
                incarnation.hex(),
            )
            return _registration_error(
                ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                f"incarnation {incarnation.hex()} of broker {broker_id} was replaced by a newer one",
            )
        if existing is not None and existing.incarnation_id == incarnation:
            # The same process again: a retry whose answer it never saw (its attempt
            # timed out while the first one committed), or one that lost track of its
            # epoch.  The same answer, and nothing written: a new registration would
            # fence it and take it out of every ISR, which at 10,000 partitions made
            # the next attempt time out too, and so on.
            self.heartbeats.touch(broker_id, now_ms)
            return ControllerResult(
                [], {"throttle_time_ms": 0, "error_code": 0, "broker_epoch": existing.epoch}
            )
        if existing is not None and existing.incarnation_id != incarnation:
            # A fenced broker has no live session (as in Kafka's heartbeat manager),
            # and only an incarnation this controller has heard from blocks a new
            # one: a broker that shut down cleanly, or crashed together with the
            # controller (one process, a whole-cluster restart), comes back at once.
            if not existing.fenced and self.heartbeats.is_heard_alive(broker_id, now_ms):
                log.warning(
                    "refusing the registration of broker %d: another incarnation is alive",
                    broker_id,
                )
                return _registration_error(
                    ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                    f"another broker is registered with id {broker_id}",
                )
            self._replaced_incarnations.setdefault(broker_id, set()).add(existing.incarnation_id)
            self.heartbeats.remove(broker_id)
        pending = PendingChanges(self.image)
        pending.append(
            make_record(
                "RegisterBrokerRecord",
                broker_id=broker_id,
                is_migrating_zk_broker=False,
                incarnation_id=incarnation,
                broker_epoch=next_offset,
                end_points=[
                    {
                        "name": listener["name"],
                        "host": listener["host"],
                        "port": listener["port"],
                        "security_protocol": listener["security_protocol"],
                    }
                    for listener in request.get("listeners") or ()
                ],
                features=[
                    {
                        "name": feature["name"],
                        "min_supported_version": feature["min_supported_version"],
                        "max_supported_version": feature["max_supported_version"],
                    }
                    for feature in request.get("features") or ()
                ],
                rack=request.get("rack"),
                fenced=True,
                in_controlled_shutdown=False,
            )
        )
        if existing is not None:
            # The broker restarted: whatever its log holds now, it is not in sync.
            self.replication.remove_broker(pending, broker_id, f"re-registration of {broker_id}")
        self.heartbeats.touch(broker_id, now_ms)
        log.info("registering broker %d at epoch %d", broker_id, next_offset)
        return ControllerResult(
            pending.records, {"throttle_time_ms": 0, "error_code": 0, "broker_epoch": next_offset}
        )

    def unregister_broker(self, request: Mapping[str, Any]) -> ControllerResult:
        broker_id = request["broker_id"]
        registration = self.image.brokers.get(broker_id)
        if registration is None:
            return ControllerResult(
                [],
                {
                    "throttle_time_ms": 0,
                    "error_code": int(ErrorCode.BROKER_ID_NOT_REGISTERED),
                    "error_message": f"broker {broker_id} is not registered",
                },
            )
        pending = PendingChanges(self.image)
        self.replication.remove_broker(pending, broker_id, f"unregistration of {broker_id}")
        pending.append(
            make_record(
                "UnregisterBrokerRecord", broker_id=broker_id, broker_epoch=registration.epoch
            )
        )
        self.heartbeats.remove(broker_id)
        log.info("unregistering broker %d", broker_id)
        return ControllerResult(
            pending.records, {"throttle_time_ms": 0, "error_code": 0, "error_message": None}
        )

    # ------------------------------------------------------------------ heartbeats
    def note_contact(self, broker_id: int, broker_epoch: int, now_ms: int) -> None:
        """A heartbeat of a registered incarnation arrived: its session is renewed
        now, before the heartbeat waits its turn behind other writes.  Writes go
        one at a time through Raft, and while one of thousands of partition
        changes committed, the heartbeats queued behind it aged past the session
        and the next poll fenced every broker at once (Kafka's controller, too,
        records a heartbeat's contact time when it arrives)."""
        registration = self.image.brokers.get(broker_id)
        if registration is not None and registration.epoch == broker_epoch:
            self.heartbeats.touch(broker_id, now_ms)

    def broker_heartbeat(self, request: Mapping[str, Any], now_ms: int) -> ControllerResult:
        broker_id, broker_epoch = request["broker_id"], request["broker_epoch"]
        registration = self.image.brokers.get(broker_id)
        if registration is None or registration.epoch != broker_epoch:
            return ControllerResult(
                [],
                {
                    "throttle_time_ms": 0,
                    "error_code": int(ErrorCode.STALE_BROKER_EPOCH),
                    "is_caught_up": False,
                    "is_fenced": True,
                    "should_shut_down": False,
                },
            )
        metadata_offset = request["current_metadata_offset"]
        self.heartbeats.touch(broker_id, now_ms, metadata_offset)
        current = _state_of(registration)
        if current is BrokerControlState.CONTROLLED_SHUTDOWN:
            # Its shutdown records are in the committed image: they are at or below here.
            self.heartbeats.note_controlled_shutdown(broker_id, self.image.last_offset)
        active = [b.id for b in self.image.active_brokers()]
        next_state = self.heartbeats.next_state(
            broker_id,
            current,
            want_fence=request.get("want_fence", False),
            want_shut_down=request.get("want_shut_down", False),
            metadata_offset=metadata_offset,
            registration_offset=registration.epoch,
            has_leaderships=self.image.brokers_to_isrs.has_leaderships(broker_id),
            lowest_active_offset=self.heartbeats.lowest_active_offset(active, broker_id),
        )
        pending = PendingChanges(self.image)
        if next_state is not current:
            self._transition(pending, registration, next_state)
        if request.get("offline_log_dirs") and not next_state.fenced:
            take_offline_dirs_out(pending, self.replication, broker_id, request["offline_log_dirs"])
        response = {
            "throttle_time_ms": 0,
            "error_code": 0,
            "is_caught_up": metadata_offset >= self.image.last_offset,
            "is_fenced": next_state.fenced,
            "should_shut_down": next_state.should_shut_down,
        }
        return ControllerResult(pending.records, response)

    def _transition(
        self, pending: PendingChanges, broker: BrokerRegistration, state: BrokerControlState
    ) -> None:
        if state is BrokerControlState.UNFENCED:
            pending.append(_change_record(broker, fenced=UNFENCE))
            self.replication.elect_leaderless(
                pending, f"unfencing broker {broker.id}", broker_to_add=broker.id
            )
        elif state is BrokerControlState.CONTROLLED_SHUTDOWN:
            pending.append(_change_record(broker, in_controlled_shutdown=1))
            self.replication.remove_broker(
                pending, broker.id, f"controlled shutdown of {broker.id}"
            )
        elif state.fenced and not broker.fenced:  # FENCED or SHUTDOWN_NOW
            why = "it asked to be" if state is BrokerControlState.FENCED else "it shuts down"
            self.fence(pending, broker, why)

    def fence(self, pending: PendingChanges, broker: BrokerRegistration, why: str) -> None:
        """Fence ``broker``: move its leaderships and ISR memberships first."""
        log.info("fencing broker %d: %s", broker.id, why)
        self.replication.remove_broker(pending, broker.id, f"fencing broker {broker.id}")
        pending.append(_change_record(broker, fenced=FENCE))

    def fence_stale_brokers(self, pending: PendingChanges, now_ms: int) -> list[int]:
        """Fence every unfenced broker whose session timed out; their ids."""
        fenced = []
        for broker_id in sorted(self.image.brokers):
            registration = self.image.brokers[broker_id]
            self.heartbeats.ensure(broker_id, now_ms)
            if registration.fenced or not self.heartbeats.is_stale(broker_id, now_ms):
                continue
            self.fence(
                pending,
                registration,
                f"no heartbeat for more than {self.config.broker_session_timeout_ms} ms",
            )
            fenced.append(broker_id)
        return fenced


def _state_of(registration: BrokerRegistration) -> BrokerControlState:
    """A broker that began a controlled shutdown stays in it until it registers
    again, even once fenced: it may only go on to shut down, never back to work."""
    if registration.in_controlled_shutdown:
        return BrokerControlState.CONTROLLED_SHUTDOWN
    if registration.fenced:
        return BrokerControlState.FENCED
    return BrokerControlState.UNFENCED


def _change_record(
    broker: BrokerRegistration, *, fenced: int = 0, in_controlled_shutdown: int = 0
) -> MetadataRecord:
    return make_record(
        "BrokerRegistrationChangeRecord",
        broker_id=broker.id,
        broker_epoch=broker.epoch,
        fenced=fenced,
        in_controlled_shutdown=in_controlled_shutdown,
    )


def _registration_error(code: ErrorCode, message: str) -> ControllerResult:
    log.info("broker registration refused: %s", message)
    return ControllerResult(
        [], {"throttle_time_ms": 0, "error_code": int(code), "broker_epoch": -1}
    )
