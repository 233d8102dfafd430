"""Classic group membership: find the coordinator, join, sync, heartbeat, leave.

The state machine of Kafka's AbstractCoordinator, without the consumer parts
(those live in ``coordinator.py``, which subclasses this):

    UNJOINED --join--> REBALANCING --sync ok--> STABLE
       ^                    |  ^                  |
       +---- leave/fenced --+  +-- rebalance -----+

* JoinGroup v4+ first answers MEMBER_ID_REQUIRED with our member id; we join
  again with it at once (KIP-394).
* The member the coordinator names leader runs the assignor and sends every
  member's assignment in its SyncGroup.
* A background heartbeat thread sends Heartbeat every
  ``heartbeat.interval.ms`` while STABLE; an error there only flags the need to
  rejoin (or to find the coordinator again), and the rejoin itself happens on
  the application thread in ``poll``.  The thread also leaves the group when
  ``poll`` was not called for ``max.poll.interval.ms``, as Kafka's does.

All group traffic goes over a NetworkClient of its own, so a parked Fetch
never delays a heartbeat; its lock is shared by the two threads.
"""

from __future__ import annotations

import logging
import threading
from enum import Enum
from typing import Any

from samsa.client.consumer.errors import kafka_error
from samsa.client.consumer.network import ConsumerNetworkClient, RequestFuture
from samsa.client.errors import KafkaTimeoutError
from samsa.errors import ErrorCode, KafkaError

__all__ = ["GroupMembership", "MemberState"]

log = logging.getLogger(__name__)

FIND_COORDINATOR = 10
JOIN_GROUP = 11
HEARTBEAT = 12
LEAVE_GROUP = 13
SYNC_GROUP = 14

# Errors after which the member must find the coordinator again.
COORDINATOR_ERRORS = frozenset({ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR})


class MemberState(Enum):
    UNJOINED = 0
    REBALANCING = 1
    STABLE = 2


class GroupMembership:
    """One member of a classic group.  Subclasses supply protocols and assignments."""

    protocol_type = "consumer"

    def __init__(self, client: ConsumerNetworkClient, cfg: dict[str, Any]) -> None:
        self.client = client
        self.group_id: str = cfg["group.id"]
        self.group_instance_id: str | None = cfg["group.instance.id"]
        self.session_timeout_ms: int = cfg["session.timeout.ms"]
        self.rebalance_timeout_ms: int = cfg["max.poll.interval.ms"]
        self.heartbeat_interval_ms: int = cfg["heartbeat.interval.ms"]
        self.retry_backoff_ms: int = cfg["retry.backoff.ms"]
        self.coordinator_id: int | None = None
        self.generation_id = -1
        self.member_id = ""
        self.leader_id = ""
        self.protocol_name: str | None = None
        self.state = MemberState.UNJOINED
        self.rejoin_needed = True
        self._cond = threading.Condition()
        self._last_poll_ms = client.now_ms()
        self._heartbeat_thread: threading.Thread | None = None
        self._heartbeat_in_flight = False
        self._last_heartbeat_ok_ms = 0
        self._closing = False
        self._pending: tuple[int, RequestFuture] | None = None

    # -- hooks for the consumer ---------------------------------------------------
    def join_metadata(self) -> list[tuple[str, bytes]]:
        raise NotImplementedError

    def perform_assignment(
        self, protocol: str, members: list[dict[str, Any]], deadline_ms: int
    ) -> dict[str, bytes]:
        raise NotImplementedError

    def on_join_prepare(self) -> None:
        """Before (re)joining: commit and revoke as the rebalance protocol requires."""

    def on_join_complete(self, protocol: str, assignment: bytes) -> None:
        raise NotImplementedError

    # -- coordinator discovery ----------------------------------------------------
    def coordinator_unknown(self) -> bool:
        return self.coordinator_id is None

    def mark_coordinator_unknown(self, why: str) -> None:
        if self.coordinator_id is not None:
            log.info(
                "[%s] coordinator %s is unavailable: %s", self.group_id, self.coordinator_id, why
            )
            self.coordinator_id = None

    def ensure_coordinator(self, deadline_ms: int) -> bool:
        """Find the group coordinator; False if the deadline passed first."""
        client = self.client
        while self.coordinator_id is None:
            left = deadline_ms - client.now_ms()
            if left <= 0:
                return False
            node = client.least_loaded_node()
            if node is None:
                client.poll(min(left, self.retry_backoff_ms))
                continue
            body = {"key": self.group_id, "key_type": 0, "coordinator_keys": [self.group_id]}
            try:
                resp = client.wait(client.send(node, FIND_COORDINATOR, body), left)
            except KafkaTimeoutError:
                return False
            except KafkaError as exc:
                log.debug("[%s] FindCoordinator failed: %s", self.group_id, exc)
                client.poll(min(max(0, deadline_ms - client.now_ms()), self.retry_backoff_ms))
                continue
            entry = resp["coordinators"][0] if resp.get("coordinators") else resp
            code = entry["error_code"]
            if code:
                err = kafka_error(code, f"FindCoordinator for group {self.group_id!r}")
                if not err.retriable and err.code not in COORDINATOR_ERRORS:
                    raise err
                client.poll(min(max(0, deadline_ms - client.now_ms()), self.retry_backoff_ms))
                continue
            node_id = entry["node_id"]
            if node_id not in client.metadata.cluster.nodes:
                client.metadata.request_update()
                client.poll(min(max(0, deadline_ms - client.now_ms()), self.retry_backoff_ms))
                continue
            self.coordinator_id = node_id
            log.debug("[%s] coordinator is node %d", self.group_id, node_id)
        return True

    # -- joining -------------------------------------------------------------------
    def need_rejoin(self) -> bool:
        return self.rejoin_needed or self.state is not MemberState.STABLE

    def request_rejoin(self, why: str) -> None:
        if not self.rejoin_needed:
            log.info("[%s] rejoin requested: %s", self.group_id, why)
        self.rejoin_needed = True

    def ensure_active_group(self, deadline_ms: int) -> bool:
        """Join (or rejoin) until STABLE; False if the deadline passed first."""
        while self.need_rejoin():
            if not self.ensure_coordinator(deadline_ms):
                return False
            if self.state is not MemberState.REBALANCING:
                self.on_join_prepare()
                self.state = MemberState.REBALANCING
            if not self._join_and_sync(deadline_ms) and self.client.now_ms() >= deadline_ms:
                return False
        self._start_heartbeat_thread()
        return True

    def _wait(self, future: RequestFuture, deadline_ms: int) -> bool:
        """Poll until ``future`` is done or the deadline passes; True if done."""
        client = self.client
        while not future.done:
            left = deadline_ms - client.now_ms()
            if left <= 0:
                return False
            client.poll(min(left, 100))
        return True

    def _join_and_sync(self, deadline_ms: int) -> bool:
        """Advance the JoinGroup/SyncGroup exchange; True once STABLE.

        The coordinator parks JoinGroup until every member has rejoined, which
        can outlast this ``poll``'s timeout; the pending request is kept and
        the next ``poll`` goes on waiting for it, so ``poll(timeout)`` never
        blocks past its timeout.
        """
        client = self.client
        assert self.coordinator_id is not None
        if self._pending is None:
            body = {
                "group_id": self.group_id,
                "session_timeout_ms": self.session_timeout_ms,
                "rebalance_timeout_ms": self.rebalance_timeout_ms,
                "member_id": self.member_id,
                "group_instance_id": self.group_instance_id,
                "protocol_type": self.protocol_type,
                "protocols": [{"name": n, "metadata": m} for n, m in self.join_metadata()],
                "reason": "",
            }
            # The coordinator parks JoinGroup for up to the rebalance timeout:
            # Kafka's consumer waits that long plus 5 s, never less than
            # request.timeout.ms.
            join_timeout = max(client.request_timeout_ms, self.rebalance_timeout_ms + 5000)
            self._pending = (
                JOIN_GROUP,
                client.send(self.coordinator_id, JOIN_GROUP, body, timeout_ms=join_timeout),
            )
        kind, future = self._pending
        if not self._wait(future, deadline_ms):
            return False
        self._pending = None
        if future.failed:
            self.mark_coordinator_unknown(str(future.exception))
            return False
        resp = future.value
        code = resp["error_code"]
        if kind == JOIN_GROUP:
            if code == ErrorCode.MEMBER_ID_REQUIRED:
                self.member_id = resp["member_id"]
                return False
            if code:
                self._handle_join_error(code, "JoinGroup")
                return False
            self.generation_id = resp["generation_id"]
            self.member_id = resp["member_id"]
            self.leader_id = resp["leader"]
            self.protocol_name = resp["protocol_name"]
            assert self.protocol_name is not None
            if self.member_id == self.leader_id:
                assignments = self.perform_assignment(
                    self.protocol_name, resp["members"], deadline_ms
                )
            else:
                assignments = {}
            body = {
                "group_id": self.group_id,
                "generation_id": self.generation_id,
                "member_id": self.member_id,
                "group_instance_id": self.group_instance_id,
                "protocol_type": self.protocol_type,
                "protocol_name": self.protocol_name,
                "assignments": [{"member_id": m, "assignment": a} for m, a in assignments.items()],
            }
            self._pending = (SYNC_GROUP, client.send(self.coordinator_id, SYNC_GROUP, body))
            return self._join_and_sync(deadline_ms)
        if code:
            self._handle_join_error(code, "SyncGroup")
            return False
        with self._cond:
            self.state = MemberState.STABLE
            self.rejoin_needed = False
            self._last_heartbeat_ok_ms = client.now_ms()
        log.info(
            "[%s] joined generation %d as %s (%s)",
            self.group_id,
            self.generation_id,
            self.member_id,
            "leader" if self.member_id == self.leader_id else "follower",
        )
        assert self.protocol_name is not None
        self.on_join_complete(self.protocol_name, resp["assignment"] or b"")
        return True

    def _handle_join_error(self, code: int, what: str) -> None:
        err = kafka_error(code, f"{what} for group {self.group_id!r}")
        if err.code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
            self.reset_generation()
        elif err.code in COORDINATOR_ERRORS:
            self.mark_coordinator_unknown(str(err))
        elif err.code in (
            ErrorCode.REBALANCE_IN_PROGRESS,
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ):
            pass
        else:
            self.state = MemberState.UNJOINED
            raise err
        log.debug("[%s] %s", self.group_id, err)

    def reset_generation(self) -> None:
        with self._cond:
            self._pending = None
            self.generation_id = -1
            self.member_id = ""
            self.state = MemberState.UNJOINED
            self.rejoin_needed = True

    # -- heartbeats ------------------------------------------------------------------
    def record_poll(self, now_ms: int) -> None:
        self._last_poll_ms = now_ms

    def _start_heartbeat_thread(self) -> None:
        if self._heartbeat_thread is None:
            self._heartbeat_thread = threading.Thread(
                target=self._heartbeat_loop, name=f"samsa-heartbeat-{self.group_id}", daemon=True
            )
            self._heartbeat_thread.start()

    def _heartbeat_loop(self) -> None:
        client = self.client
        next_heartbeat_ms = 0
        while True:
            with self._cond:
                if self._closing:
                    return
            now = client.now_ms()
            if self.state is MemberState.STABLE and self.coordinator_id is not None:
                if now - self._last_poll_ms > self.rebalance_timeout_ms:
                    log.warning(
                        "[%s] poll() not called for %d ms (max.poll.interval.ms); leaving the group",
                        self.group_id,
                        now - self._last_poll_ms,
                    )
                    self.maybe_leave_group("poll timeout")
                elif now - self._last_heartbeat_ok_ms > self.session_timeout_ms:
                    self.mark_coordinator_unknown("no heartbeat response within the session")
                    self.request_rejoin("session timed out")
                elif now >= next_heartbeat_ms and not self._heartbeat_in_flight:
                    self._send_heartbeat()
                    next_heartbeat_ms = now + self.heartbeat_interval_ms
            try:
                client.poll(0)
            except Exception:  # the thread must not die on a transient error
                log.exception("[%s] heartbeat poll failed", self.group_id)
            with self._cond:
                if self._closing:
                    return
                wait_ms = max(0, min(next_heartbeat_ms - client.now_ms(), self.retry_backoff_ms))
                if self._heartbeat_in_flight or self.state is not MemberState.STABLE:
                    wait_ms = min(wait_ms or self.retry_backoff_ms, self.retry_backoff_ms)
                self._cond.wait(max(wait_ms, 10) / 1000.0)

    def _send_heartbeat(self) -> None:
        assert self.coordinator_id is not None
        body = {
            "group_id": self.group_id,
            "generation_id": self.generation_id,
            "member_id": self.member_id,
            "group_instance_id": self.group_instance_id,
        }
        generation = self.generation_id
        self._heartbeat_in_flight = True
        future = self.client.send(self.coordinator_id, HEARTBEAT, body)

        def done(f: Any) -> None:
            self._heartbeat_in_flight = False
            if f.failed:
                self.mark_coordinator_unknown(f"heartbeat failed: {f.exception}")
                return
            code = f.value["error_code"]
            if code == 0:
                self._last_heartbeat_ok_ms = self.client.now_ms()
                return
            if generation != self.generation_id:
                return
            err = kafka_error(code, "heartbeat")
            if err.code is ErrorCode.REBALANCE_IN_PROGRESS:
                self._last_heartbeat_ok_ms = self.client.now_ms()
                self.request_rejoin("the group is rebalancing")
            elif err.code in (
                ErrorCode.ILLEGAL_GENERATION,
                ErrorCode.UNKNOWN_MEMBER_ID,
                ErrorCode.FENCED_INSTANCE_ID,
            ):
                log.info("[%s] heartbeat: %s; rejoining", self.group_id, err)
                self.on_partitions_lost()
                self.reset_generation()
            elif err.code in COORDINATOR_ERRORS:
                self.mark_coordinator_unknown(str(err))
            else:
                log.warning("[%s] heartbeat failed: %s", self.group_id, err)

        future.add_callback(done)

    def on_partitions_lost(self) -> None:
        """Called (from the heartbeat thread) when the member was fenced."""

    # -- leaving -------------------------------------------------------------------
    def maybe_leave_group(self, reason: str) -> None:
        """Send LeaveGroup (dynamic members only, as Kafka) and forget the generation."""
        if (
            self.coordinator_id is not None
            and self.member_id
            and self.group_instance_id is None
            and self.state is not MemberState.UNJOINED
        ):
            body = {
                "group_id": self.group_id,
                "member_id": self.member_id,
                "members": [
                    {"member_id": self.member_id, "group_instance_id": None, "reason": reason}
                ],
            }
            future = self.client.send(self.coordinator_id, LEAVE_GROUP, body)
            try:
                self.client.wait(future, min(5000, self.session_timeout_ms))
            except (KafkaError, KafkaTimeoutError) as exc:
                log.debug("[%s] LeaveGroup failed: %s", self.group_id, exc)
        self.reset_generation()

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        thread = self._heartbeat_thread
        if thread is not None and thread is not threading.current_thread():
            self.client.wakeup()
            thread.join(5)
