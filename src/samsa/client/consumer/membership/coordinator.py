"""The consumer side of group membership (Kafka's ConsumerCoordinator).

On top of ``GroupMembership`` this adds what a *consumer* group means: the
subscription sent in JoinGroup (topics and, for cooperative assignors, the
partitions owned now), the leader's call into the assignor, applying the
received assignment with the rebalance listener callbacks, and offsets --
OffsetCommit / OffsetFetch, synchronous, asynchronous and automatic (the
messages' shapes are ``offset_requests``'s).

Callbacks: ``on_revoke`` runs before partitions are given up (eager: all of
them before every rebalance; cooperative: only the ones moved away) and is the
place to commit; ``on_assign`` runs with the partitions added.  Both run on
the application thread inside ``poll``; asynchronous commit callbacks too.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from samsa.client.consumer.assignors import Assignor, build_assignors
from samsa.client.consumer.errors import CommitFailedError, kafka_error
from samsa.client.consumer.membership.group import COORDINATOR_ERRORS, GroupMembership, MemberState
from samsa.client.consumer.membership.offset_requests import (
    OFFSET_COMMIT,
    OFFSET_FETCH,
    commit_error,
    committed_offsets,
    normalize_offsets,
    offset_commit_body,
    offset_fetch_body,
    offset_fetch_group,
)
from samsa.client.consumer.network import ConsumerNetworkClient, RequestFuture
from samsa.client.consumer.records import OffsetAndMetadata
from samsa.client.consumer.subscription import SubscriptionState
from samsa.client.errors import KafkaTimeoutError
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

__all__ = ["ConsumerCoordinator", "RebalanceCallback"]

log = logging.getLogger(__name__)

METADATA = 3

RebalanceCallback = Callable[[Any, list[TopicPartition]], None]
CommitCallback = Callable[[dict[TopicPartition, OffsetAndMetadata], BaseException | None], None]

_FENCED = frozenset(
    {ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.REBALANCE_IN_PROGRESS}
)


class ConsumerCoordinator(GroupMembership):
    def __init__(
        self,
        client: ConsumerNetworkClient,
        subscriptions: SubscriptionState,
        cfg: dict[str, Any],
        consumer: Any,
    ) -> None:
        super().__init__(client, cfg)
        self.subscriptions = subscriptions
        self.consumer = consumer
        self.assignors: list[Assignor] = build_assignors(cfg["partition.assignment.strategy"])
        # Cooperative only if every configured assignor is (Kafka's rule).
        self.cooperative = all(a.rebalance_protocol == "cooperative" for a in self.assignors)
        self.auto_commit: bool = cfg["enable.auto.commit"]
        self.auto_commit_interval_ms: int = cfg["auto.commit.interval.ms"]
        self.next_auto_commit_ms = client.now_ms() + self.auto_commit_interval_ms
        self.on_assign: RebalanceCallback | None = None
        self.on_revoke: RebalanceCallback | None = None
        self.on_lost: RebalanceCallback | None = None
        self.request_timeout_ms: int = cfg["request.timeout.ms"]
        self._completed_commits: deque[Callable[[], None]] = deque()
        self._lost = False

    # -- membership hooks ---------------------------------------------------------
    def join_metadata(self) -> list[tuple[str, bytes]]:
        topics = sorted(self.subscriptions.subscription)
        owned: dict[str, list[int]] = {}
        if self.cooperative:
            for tp in self.subscriptions.assignment:
                owned.setdefault(tp.topic, []).append(tp.partition)
        return [
            (
                a.name,
                encode_subscription(
                    topics,
                    a.user_data(topics),
                    owned_partitions=owned,
                    generation_id=self.generation_id,
                ),
            )
            for a in self.assignors
        ]

    def perform_assignment(
        self, protocol: str, members: list[dict[str, Any]], deadline_ms: int
    ) -> dict[str, bytes]:
        assignor = next((a for a in self.assignors if a.name == protocol), None)
        if assignor is None:
            raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"unknown assignor {protocol}")
        subscriptions = {m["member_id"]: decode_subscription(m["metadata"]) for m in members}
        topics = {t for s in subscriptions.values() for t in s.topics}
        self.subscriptions.group_subscription = topics
        counts = self.topic_partition_counts(topics, deadline_ms)
        plan = assignor.assign(counts, subscriptions)
        log.info("[%s] leader assigned %s", self.group_id, plan)
        return {member: encode_assignment(plan.get(member, {})) for member in subscriptions}

    def topic_partition_counts(
        self, topics: Iterable[str] | None, deadline_ms: int
    ) -> dict[str, int]:
        """Partition count per topic (all topics when ``topics`` is None), from one Metadata call."""
        client = self.client
        names = None if topics is None else sorted(topics)
        body = {
            "topics": None
            if names is None
            else [{"topic_id": b"\x00" * 16, "name": t} for t in names],
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }
        # The leader cannot finish the rebalance without these counts, so it may
        # wait a full request timeout even past the caller's poll deadline.
        deadline_ms = max(deadline_ms, client.now_ms() + self.request_timeout_ms)
        while True:
            node = client.least_loaded_node()
            if node is not None:
                try:
                    resp = client.wait(
                        client.send(node, METADATA, body),
                        max(1, deadline_ms - client.now_ms()),
                    )
                    return {
                        t["name"]: len(t["partitions"])
                        for t in resp["topics"]
                        if t["error_code"] == 0 and t["partitions"]
                    }
                except (KafkaError, KafkaTimeoutError) as exc:
                    log.debug("[%s] metadata for assignment failed: %s", self.group_id, exc)
            if client.now_ms() >= deadline_ms:
                raise KafkaTimeoutError("no metadata for the group's topics")
            client.poll(self.retry_backoff_ms)

    def on_join_prepare(self) -> None:
        if self.auto_commit and self.generation_id >= 0:
            try:
                self.commit_sync(self.subscriptions.all_consumed(), self.request_timeout_ms)
            except (KafkaError, KafkaTimeoutError) as exc:
                log.warning("[%s] commit before rebalance failed: %s", self.group_id, exc)
        if not self.give_up_lost_partitions() and not self.cooperative:
            revoked = list(self.subscriptions.assignment)
            if revoked:
                self._invoke(self.on_revoke, revoked)
            self.subscriptions.assign_from_subscribed([])

    def on_join_complete(self, protocol: str, assignment: bytes) -> None:
        decoded = decode_assignment(assignment) if assignment else None
        new = [
            TopicPartition(t, p)
            for t, ps in (decoded.partitions.items() if decoded else ())
            for p in ps
        ]
        owned = list(self.subscriptions.assignment)
        added = [tp for tp in new if tp not in set(owned)]
        revoked = [tp for tp in owned if tp not in set(new)]
        if revoked:
            self._invoke(self.on_revoke, revoked)
        self.subscriptions.assign_from_subscribed(new)
        self.next_auto_commit_ms = self.client.now_ms() + self.auto_commit_interval_ms
        self._invoke(self.on_assign, added)
        if self.cooperative and revoked:
            # KIP-429: give the revoked partitions' new owners their turn.
            self.request_rejoin("partitions revoked in a cooperative rebalance")

    def on_partitions_lost(self) -> None:
        self._lost = True

    def give_up_lost_partitions(self) -> bool:
        """After a fencing: drop every partition (on_lost, else on_revoke); True if fenced."""
        if not self._lost:
            return False
        self._lost = False
        lost = list(self.subscriptions.assignment)
        if lost:
            self._invoke(self.on_lost or self.on_revoke, lost)
            self.subscriptions.assign_from_subscribed([])
        return True

    def _invoke(self, callback: RebalanceCallback | None, partitions: list[TopicPartition]) -> None:
        if callback is None:
            return
        try:
            callback(self.consumer, partitions)
        except Exception:
            log.exception("[%s] rebalance callback failed", self.group_id)

    # -- the consumer's per-poll duty ---------------------------------------------------
    def poll(self, deadline_ms: int) -> bool:
        """Keep the membership alive; True when the member has its assignment."""
        now = self.client.now_ms()
        self.record_poll(now)
        self.run_commit_callbacks()
        if self.subscriptions.has_auto_assignment:
            if self.subscriptions.pattern is not None and self.need_rejoin():
                self.refresh_pattern(deadline_ms)
            if not self.ensure_active_group(deadline_ms):
                return False
        elif self.coordinator_unknown() and not self.ensure_coordinator(deadline_ms):
            return False
        self.maybe_auto_commit(now)
        return True

    def refresh_pattern(self, deadline_ms: int) -> None:
        try:
            names = self.topic_partition_counts(None, deadline_ms)
        except KafkaTimeoutError:
            return
        if self.subscriptions.match_pattern(names):
            for topic in self.subscriptions.subscription:
                self.consumer._metadata.add_topic(topic)

    def maybe_auto_commit(self, now_ms: int) -> None:
        if not self.auto_commit or now_ms < self.next_auto_commit_ms:
            return
        self.next_auto_commit_ms = now_ms + self.auto_commit_interval_ms
        offsets = self.subscriptions.all_consumed()
        if offsets and not self.coordinator_unknown():
            self.commit_async(offsets, None)

    def time_to_next_auto_commit_ms(self, now_ms: int) -> int:
        if not self.auto_commit:
            return 2**31
        return max(0, self.next_auto_commit_ms - now_ms)

    # -- commits ------------------------------------------------------------------------
    def _commit_body(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> dict[str, Any]:
        stable = self.state is MemberState.STABLE and self.subscriptions.has_auto_assignment
        return offset_commit_body(
            offsets,
            self.group_id,
            self.generation_id if stable else -1,
            self.member_id if stable else "",
            self.group_instance_id,
        )

    def _send_commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> RequestFuture:
        """OffsetCommit; the returned future fails with the first partition error."""
        result = RequestFuture()
        assert self.coordinator_id is not None
        sent = self.client.send(self.coordinator_id, OFFSET_COMMIT, self._commit_body(offsets))

        def done(f: RequestFuture) -> None:
            if f.failed:
                assert f.exception is not None
                self.mark_coordinator_unknown(str(f.exception))
                result.fail(f.exception)
                return
            err = commit_error(f.value)
            if err is None:
                result.complete(None)
                return
            if err.code in COORDINATOR_ERRORS:
                self.mark_coordinator_unknown(str(err))
            elif err.code in _FENCED:
                if err.code is not ErrorCode.REBALANCE_IN_PROGRESS:
                    self.reset_generation()
                self.request_rejoin("commit fenced")
                err = CommitFailedError(
                    err.code,
                    "the group rebalanced and the partitions may have moved; "
                    "records since the last commit will be consumed again",
                )
            result.fail(err)

        sent.add_callback(done)
        return result

    def commit_sync(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata | int], timeout_ms: int
    ) -> None:
        """Commit and wait; retries coordinator moves, raises CommitFailedError when fenced."""
        normalized = normalize_offsets(offsets)
        if not normalized:
            return
        deadline = self.client.now_ms() + timeout_ms
        while True:
            if not self.ensure_coordinator(deadline):
                raise KafkaTimeoutError(f"commit did not finish in {timeout_ms} ms")
            future = self._send_commit(normalized)
            try:
                self.client.wait(future, max(1, deadline - self.client.now_ms()))
                return
            except KafkaError as exc:
                if isinstance(exc, CommitFailedError) or not (
                    exc.retriable or exc.code in COORDINATOR_ERRORS
                ):
                    raise
                if self.client.now_ms() >= deadline:
                    raise
                self.client.poll(self.retry_backoff_ms)

    def commit_async(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int],
        callback: CommitCallback | None,
    ) -> None:
        normalized = normalize_offsets(offsets)
        if self.coordinator_unknown():
            err = KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "coordinator unknown")
            if callback is not None:
                self._completed_commits.append(lambda: callback(normalized, err))
            return
        future = self._send_commit(normalized)
        if callback is not None:
            future.add_callback(
                lambda f: self._completed_commits.append(lambda: callback(normalized, f.exception))
            )
        self.client.poll(0)

    def run_commit_callbacks(self) -> None:
        while self._completed_commits:
            self._completed_commits.popleft()()

    # -- committed offsets -------------------------------------------------------------
    def fetch_committed(
        self, partitions: Iterable[TopicPartition], timeout_ms: int
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        wanted = [TopicPartition(*tp) for tp in partitions]
        if not wanted:
            return {}
        body = offset_fetch_body(self.group_id, wanted)
        deadline = self.client.now_ms() + timeout_ms
        while True:
            if not self.ensure_coordinator(deadline):
                raise KafkaTimeoutError(f"committed offsets not fetched in {timeout_ms} ms")
            assert self.coordinator_id is not None
            future = self.client.send(self.coordinator_id, OFFSET_FETCH, body)
            try:
                resp = self.client.wait(future, max(1, deadline - self.client.now_ms()))
            except KafkaError as exc:
                self.mark_coordinator_unknown(str(exc))
                continue
            group = offset_fetch_group(resp)
            code = group.get("error_code", 0)
            if code:
                err = kafka_error(code, "OffsetFetch")
                if err.code in COORDINATOR_ERRORS:
                    self.mark_coordinator_unknown(str(err))
                    continue
                if err.retriable and self.client.now_ms() < deadline:
                    self.client.poll(self.retry_backoff_ms)
                    continue
                raise err
            return committed_offsets(group, wanted)

    # -- leaving ------------------------------------------------------------------------
    def close_group(self, timeout_ms: int) -> None:
        """Final commit (auto-commit on), revoke callbacks, LeaveGroup; then stop heartbeats."""
        try:
            if self.auto_commit and not self.coordinator_unknown():
                offsets = self.subscriptions.all_consumed()
                if offsets:
                    self.commit_sync(offsets, timeout_ms)
        except (KafkaError, KafkaTimeoutError) as exc:
            log.warning("[%s] final commit failed: %s", self.group_id, exc)
        finally:
            if self.subscriptions.has_auto_assignment and self.subscriptions.assignment:
                self._invoke(self.on_revoke, list(self.subscriptions.assignment))
            self.close()
            self.maybe_leave_group("the consumer is closing")
            self.run_commit_callbacks()

    def unsubscribe(self) -> None:
        if self.subscriptions.assignment and self.subscriptions.has_auto_assignment:
            self._invoke(self.on_revoke, list(self.subscriptions.assignment))
        self.maybe_leave_group("the consumer unsubscribed")
