"""``group.protocol=consumer``: membership of a KIP-848 group, as Kafka 4's consumer does it.

There is no JoinGroup/SyncGroup round and no leader: the member sends
ConsumerGroupHeartbeat (68) with its subscription and the partitions it holds,
and the coordinator answers with its member epoch and, when it changed, the
partitions it may use now (by topic id).  Reconciling is local and incremental:
the member revokes what left its assignment (committing first, with
auto-commit), takes what arrived, and says so in its next heartbeat; nothing
else in the group waits for it.

Threads, as for the classic protocol (``group.py``): the background thread
heartbeats every interval the coordinator asks for; an answer carrying a new
assignment is parked in ``_pending_assignment`` and applied on the
application thread in ``poll``, where rebalance callbacks run.  A fenced member
(FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) loses its partitions and rejoins with
epoch 0 under the same member id.
"""

from __future__ import annotations

import base64
import logging
import uuid
from typing import Any

from samsa.client.consumer.errors import kafka_error
from samsa.client.consumer.membership.coordinator import METADATA, ConsumerCoordinator
from samsa.client.consumer.membership.group import COORDINATOR_ERRORS, MemberState
from samsa.client.errors import KafkaTimeoutError
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

CONSUMER_GROUP_HEARTBEAT = 68
LEAVE_EPOCH, STATIC_LEAVE_EPOCH = -1, -2
_FENCED = frozenset({ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID})

Assignment = dict[bytes, list[int]]


def new_member_id() -> str:
    """A random member id, 22 url-safe characters as Kafka's ``Uuid.toString`` (KIP-1082)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ConsumerProtocolCoordinator(ConsumerCoordinator):
    """A KIP-848 member; replaces the classic join/sync/heartbeat of ``GroupMembership``."""

    def __init__(self, client: Any, subscriptions: Any, cfg: dict[str, Any], consumer: Any) -> None:
        super().__init__(client, subscriptions, cfg, consumer)
        self.member_id = new_member_id()
        self.remote_assignor: str | None = cfg["group.remote.assignor"]
        self._pending_assignment: Assignment | None = None
        self._names: dict[bytes, str] = {}
        self._ids: dict[str, bytes] = {}
        self._sent_subscription: tuple[object, ...] | None = None

    # -- membership ------------------------------------------------------------------
    def need_rejoin(self) -> bool:
        return super().need_rejoin() or self._pending_assignment is not None

    def on_join_prepare(self) -> None:
        """Only a fenced member gives everything up; otherwise partitions move one by one."""
        self.give_up_lost_partitions()

    def reset_generation(self) -> None:
        member_id = self.member_id
        super().reset_generation()
        self.member_id = member_id  # v1: the member keeps the id it generated
        self._pending_assignment = None

    def _join_and_sync(self, deadline_ms: int) -> bool:
        """One heartbeat round on the application thread; True once nothing is left to apply.

        A heartbeat still unanswered when ``poll``'s timeout ends is kept and
        waited for by the next ``poll``, as the classic JoinGroup is, so its
        answer (a new epoch, an assignment) is never dropped.
        """
        if self._pending is None:
            if self._pending_assignment is not None and not self._apply_assignment(deadline_ms):
                return False
            assert self.coordinator_id is not None
            epoch = max(self.generation_id, 0)
            body = self._heartbeat_body(epoch, full=epoch == 0)
            self._pending = (
                CONSUMER_GROUP_HEARTBEAT,
                self.client.send(self.coordinator_id, CONSUMER_GROUP_HEARTBEAT, body),
            )
        _kind, future = self._pending
        if not self._wait(future, deadline_ms):
            return False
        self._pending = None
        if future.failed:
            self.mark_coordinator_unknown(str(future.exception))
            return False
        if not self._on_response(future.value, raise_errors=True):
            return False
        if self._pending_assignment is not None:
            return False  # applied on the next round of ensure_active_group
        with self._cond:
            self.state = MemberState.STABLE
            self.rejoin_needed = False
            self._last_heartbeat_ok_ms = self.client.now_ms()
        return True

    def _send_heartbeat(self) -> None:
        """The background thread's heartbeat (the member is STABLE)."""
        assert self.coordinator_id is not None
        body = self._heartbeat_body(self.generation_id, full=False)
        self._heartbeat_in_flight = True
        future = self.client.send(self.coordinator_id, CONSUMER_GROUP_HEARTBEAT, body)

        def done(f: Any) -> None:
            self._heartbeat_in_flight = False
            if f.failed:
                self.mark_coordinator_unknown(f"heartbeat failed: {f.exception}")
                return
            self._on_response(f.value, raise_errors=False)
            if self._pending_assignment is not None:
                self.request_rejoin("the coordinator sent a new assignment")

        future.add_callback(done)

    def _subscription(self) -> tuple[object, ...]:
        pattern = self.subscriptions.pattern
        if pattern is not None:
            return ("regex", pattern.pattern)
        return ("names", *sorted(self.subscriptions.subscription))

    def _heartbeat_body(self, epoch: int, *, full: bool) -> dict[str, Any]:
        """The request; ``full`` (joining) sends every field, otherwise only what changed
        (the subscription after a new ``subscribe()``) and, always, the owned partitions."""
        subs = self.subscriptions
        pattern = subs.pattern
        subscription = self._subscription()
        resend = full or subscription != self._sent_subscription
        self._sent_subscription = subscription
        owned: dict[bytes, list[int]] = {}
        if epoch > 0:
            for tp in subs.assignment:
                topic_id = self._ids.get(tp.topic)
                if topic_id is not None:
                    owned.setdefault(topic_id, []).append(tp.partition)
        return {
            "group_id": self.group_id,
            "member_id": self.member_id,
            "member_epoch": epoch,
            "instance_id": self.group_instance_id if full else None,
            "rack_id": None,
            "rebalance_timeout_ms": self.rebalance_timeout_ms if full else -1,
            "subscribed_topic_names": (
                sorted(subs.subscription) if resend and pattern is None else None
            ),
            "subscribed_topic_regex": pattern.pattern if resend and pattern is not None else None,
            "server_assignor": self.remote_assignor if full else None,
            "topic_partitions": [
                {"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(owned.items())
            ],
        }

    def _on_response(self, resp: dict[str, Any], *, raise_errors: bool) -> bool:
        code = resp["error_code"]
        if code == 0:
            with self._cond:
                self._last_heartbeat_ok_ms = self.client.now_ms()
                self.generation_id = resp["member_epoch"]
                if resp.get("member_id"):
                    self.member_id = resp["member_id"]
                if resp["heartbeat_interval_ms"] > 0:
                    self.heartbeat_interval_ms = resp["heartbeat_interval_ms"]
                if resp["assignment"] is not None:
                    self._pending_assignment = {
                        bytes(t["topic_id"]): list(t["partitions"])
                        for t in resp["assignment"]["topic_partitions"]
                    }
            return True
        err = kafka_error(code, f"ConsumerGroupHeartbeat for group {self.group_id!r}")
        if err.code in _FENCED:
            log.info("[%s] %s; rejoining", self.group_id, err)
            self.on_partitions_lost()
            self.reset_generation()
        elif err.code in COORDINATOR_ERRORS:
            self.mark_coordinator_unknown(str(err))
        elif err.code is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            pass
        elif raise_errors:
            self.state = MemberState.UNJOINED
            raise err
        else:
            log.warning("[%s] heartbeat failed: %s", self.group_id, err)
        return False

    def _commit_body(self, offsets: Any) -> dict[str, Any]:
        """Commits carry the member epoch whenever the member has one: partitions move one
        at a time, so a member commits in the middle of reconciling too."""
        body = super()._commit_body(offsets)
        if self.generation_id > 0 and self.subscriptions.has_auto_assignment:
            body["generation_id_or_member_epoch"] = self.generation_id
            body["member_id"] = self.member_id
        return body

    # -- reconciliation --------------------------------------------------------------
    def _apply_assignment(self, deadline_ms: int) -> bool:
        """Revoke what left, take what came; False while a topic id is not known yet."""
        pending = self._pending_assignment
        assert pending is not None
        if any(t not in self._names for t in pending) and not self._learn_topic_ids(deadline_ms):
            return False
        if any(t not in self._names for t in pending):
            return False  # a topic created a moment ago: the next metadata will have it
        self._pending_assignment = None
        new = [TopicPartition(self._names[t], p) for t, ps in pending.items() for p in ps]
        owned = list(self.subscriptions.assignment)
        revoked = [tp for tp in owned if tp not in set(new)]
        added = [tp for tp in new if tp not in set(owned)]
        if revoked:
            if self.auto_commit:
                consumed = self.subscriptions.all_consumed()
                mine = {tp: om for tp, om in consumed.items() if tp in set(revoked)}
                if mine:
                    try:
                        self.commit_sync(mine, self.request_timeout_ms)
                    except (KafkaError, KafkaTimeoutError) as exc:
                        log.warning("[%s] commit before revoking failed: %s", self.group_id, exc)
            self._invoke(self.on_revoke, revoked)
        if self.subscriptions.pattern is not None:
            self.subscriptions.match_pattern(
                {tp.topic for tp in new} | self.subscriptions.subscription
            )
        for topic in {tp.topic for tp in new}:
            self.consumer._metadata.add_topic(topic)
        self.subscriptions.assign_from_subscribed(new)
        log.info("[%s] epoch %d: assigned %s", self.group_id, self.generation_id, sorted(new))
        self._invoke(self.on_assign, added)
        return True

    def _learn_topic_ids(self, deadline_ms: int) -> bool:
        """Map every topic id to its name with one Metadata (v10+) request."""
        client = self.client
        node = client.least_loaded_node()
        if node is None:
            client.poll(self.retry_backoff_ms)
            return False
        body = {
            "topics": None,
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }
        try:
            resp = client.wait(
                client.send(node, METADATA, body), max(1, deadline_ms - client.now_ms())
            )
        except (KafkaError, KafkaTimeoutError) as exc:
            log.debug("[%s] metadata for topic ids failed: %s", self.group_id, exc)
            return False
        for t in resp["topics"]:
            topic_id = bytes(t.get("topic_id") or b"")
            if t["error_code"] == 0 and t["name"] and topic_id.strip(b"\x00"):
                self._names[topic_id] = t["name"]
                self._ids[t["name"]] = topic_id
        return True

    # -- leaving ---------------------------------------------------------------------
    def maybe_leave_group(self, reason: str) -> None:
        """Heartbeat with epoch -1 (or -2 for a static member, which keeps its partitions)."""
        if self.coordinator_id is not None and self.generation_id > 0:
            epoch = STATIC_LEAVE_EPOCH if self.group_instance_id is not None else LEAVE_EPOCH
            body = self._heartbeat_body(epoch, full=False)
            body["instance_id"] = self.group_instance_id
            body["topic_partitions"] = None
            future = self.client.send(self.coordinator_id, CONSUMER_GROUP_HEARTBEAT, body)
            try:
                self.client.wait(future, min(5000, self.session_timeout_ms))
            except (KafkaError, KafkaTimeoutError) as exc:
                log.debug("[%s] leave heartbeat failed: %s", self.group_id, exc)
        self.reset_generation()
