"""ShareFetch (78) and ShareAcknowledge (79): share partitions read on their leader.

A ShareFetch first applies the acknowledgements it carries, then, for every
partition of the member's share session, reads record batches from the log at
the share partition's fetch offset and acquires what it can.  The batches go
back as stored (only their 61-byte headers are looked at, to learn each batch's
offsets), beside the acquired offset ranges; the client hands out only the
records inside those ranges.  When nothing could be acquired the request waits,
like a Fetch, until the partitions grow or ``max_wait_ms`` passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.replica_manager import FetchWaiter
from samsa.server.connections.router import Body, Router
from samsa.server.coordinators.share_records import batch_spans, cut
from samsa.server.coordinators.share_wiring import API_KEYS as STATE_API_KEYS
from samsa.server.coordinators.share_wiring import ShareStateService
from samsa.share.manager import SharePartitionManager, ShareSettings
from samsa.share.sessions import FINAL_EPOCH, INITIAL_EPOCH, ShareSession, ShareSessionError
from samsa.share.share_partition import SharePartition

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

SHARE_FETCH = 78
SHARE_ACKNOWLEDGE = 79
RENEW_VERSION = 2
RECORD_LIMIT_MODE = 1
PartitionKey = tuple[bytes, int]


def register(router: Router, broker: BrokerApi) -> None:
    if broker.share_partitions is None:
        broker.share_partitions = SharePartitionManager(
            ShareSettings.from_properties(dict(broker.config.items())),
            ShareStateService(broker),
        )
    manager: SharePartitionManager = broker.share_partitions
    router.register(
        SHARE_FETCH, lambda ctx, req: ShareFetch(broker, manager, req, ctx.version).run()
    )
    router.register(
        SHARE_ACKNOWLEDGE,
        lambda ctx, req: ShareFetch(broker, manager, req, ctx.version).acknowledge_only(),
    )
    service = manager.persister
    assert isinstance(service, ShareStateService)
    for api, key in STATE_API_KEYS.items():
        router.register(key, partial(_share_state, service, api))


async def _share_state(service: ShareStateService, api: str, ctx: Any, req: Body) -> Body:
    """Read/Write/Initialize/DeleteShareGroupState: the share coordinator's APIs."""
    coordinator = await service.coordinator()
    return await coordinator.handle(api, req)


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class ShareFetch:
    """One ShareFetch or ShareAcknowledge request."""

    def __init__(
        self, broker: BrokerApi, manager: SharePartitionManager, req: Body, version: int = 1
    ) -> None:
        self.broker = broker
        self.manager = manager
        self.req = req
        # v2 (KIP-1222): Renew acknowledgements, allowed only in a request that
        # says so; such a ShareFetch only acknowledges (it fetches nothing).
        self.renew = version >= RENEW_VERSION and bool(req.get("is_renew_ack"))
        # v2 (KIP-1206): record-limit acquisition never exceeds max_records.
        self.record_limit = (
            version >= RENEW_VERSION and req.get("share_acquire_mode", 0) == RECORD_LIMIT_MODE
        )
        self.group_id: str = req.get("group_id") or ""
        self.member_id: str = req.get("member_id") or ""
        self.epoch: int = req["share_session_epoch"]
        self.names = {tid: t.name for tid, t in broker.image.topics_by_id.items()}

    # --------------------------------------------------------------- entry

    async def acknowledge_only(self) -> Body:
        """ShareAcknowledge (79)."""
        error = self._check_request(acks_allowed=True)
        if error is not None:
            return _top_error(error[0], error[1], with_lock=False)
        if self.epoch == INITIAL_EPOCH:
            return _top_error(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                "ShareAcknowledge cannot open a session",
                with_lock=False,
            )
        try:
            session = self.manager.open_session(
                self.group_id, self.member_id, self.epoch, wall_ms()
            )
        except ShareSessionError as exc:
            return _top_error(exc.code, str(exc), with_lock=False)
        results = await self._apply_acknowledgements()
        if self.epoch == FINAL_EPOCH:
            self._close(session)
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "acquisition_lock_timeout_ms": self.manager.settings.limits.lock_duration_ms,
            "responses": _by_topic(
                {key: self._partition_entry(key, code, msg) for key, (code, msg) in results.items()}
            ),
            "node_endpoints": [],
        }

    async def run(self) -> Body:
        """ShareFetch (78)."""
        error = self._check_request(acks_allowed=self.epoch != INITIAL_EPOCH)
        if error is None and self.renew:
            error = self._check_renew_only()
        if error is not None:
            return _top_error(error[0], error[1], with_lock=True)
        try:
            session = self.manager.open_session(
                self.group_id, self.member_id, self.epoch, wall_ms()
            )
        except ShareSessionError as exc:
            return _top_error(exc.code, str(exc), with_lock=True)
        for topic in self.req.get("forgotten_topics_data") or ():
            for index in topic["partitions"]:
                session.partitions.discard((bytes(topic["topic_id"]), index))
        for topic in self.req.get("topics") or ():
            for p in topic["partitions"]:
                session.partitions.add((bytes(topic["topic_id"]), p["partition_index"]))
        if self.epoch == INITIAL_EPOCH:
            # On failure the cached state is kept; it is read again on the next load.
            with contextlib.suppress(KafkaError):
                await self.manager.revalidate(self.group_id, session.partitions)
        acks = await self._apply_acknowledgements()
        if self.epoch == FINAL_EPOCH:
            self._close(session)
            return self._response({}, acks)
        if self.renew:
            return self._response({}, acks)
        entries = await self._acquire_all(session)
        if any(e.get("acquired_records") for e in entries.values()) or self.req["max_wait_ms"] <= 0:
            return self._response(entries, acks)
        return await self._wait_then_acquire(session, acks)

    async def _wait_then_acquire(
        self, session: ShareSession, acks: dict[PartitionKey, tuple[ErrorCode, str | None]]
    ) -> Body:
        keys = [(self.names[tid], index) for tid, index in session.partitions if tid in self.names]
        waiter = FetchWaiter(1)
        replicas = self.broker.replicas
        replicas.park(keys, waiter)
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(waiter.future), self._wait_ms(session) / 1000)
        finally:
            replicas.unpark(keys, waiter)
        if self.manager.sessions.sessions.get((self.group_id, self.member_id)) is not session:
            return self._response({}, acks)
        return self._response(await self._acquire_all(session), acks)

    def _wait_ms(self, session: ShareSession) -> int:
        """``max_wait_ms``, cut short when an acquisition lock expires sooner (its
        records become acquirable again without the log growing)."""
        wait = int(self.req["max_wait_ms"])
        now = wall_ms()
        for key in session.partitions:
            partition = self.manager.existing(self.group_id, key)
            deadline = None if partition is None else partition.next_deadline
            if deadline is not None:
                wait = min(wait, max(deadline - now, 0) + 1)
        return wait

    # ------------------------------------------------------------ checks

    def _check_request(self, *, acks_allowed: bool) -> tuple[ErrorCode, str] | None:
        if not self.group_id:
            return ErrorCode.INVALID_REQUEST, "GroupId must be set"
        if not self.member_id:
            return ErrorCode.INVALID_REQUEST, "MemberId must be set"
        if not acks_allowed:
            for topic in self.req.get("topics") or ():
                for p in topic["partitions"]:
                    if p.get("acknowledgement_batches"):
                        return (
                            ErrorCode.INVALID_REQUEST,
                            "acknowledgements cannot open a share session",
                        )
        return None

    def _check_renew_only(self) -> tuple[ErrorCode, str] | None:
        """A renewing ShareFetch fetches nothing, so its fetch limits must be 0."""
        wrong = "".join(
            f"{field} must be set to 0, "
            for field, key in (
                ("maxBytes", "max_bytes"),
                ("minBytes", "min_bytes"),
                ("maxRecords", "max_records"),
                ("maxWaitMs", "max_wait_ms"),
            )
            if self.req.get(key)
        )
        if wrong:
            return ErrorCode.INVALID_REQUEST, wrong + "if isRenewAck is true."
        return None

    def _close(self, session: ShareSession) -> None:
        self.manager.sessions.close(self.group_id, self.member_id)
        self.manager.release_member(self.group_id, self.member_id, session.partitions)

    # ------------------------------------------------------- acknowledge

    async def _apply_acknowledgements(self) -> dict[PartitionKey, tuple[ErrorCode, str | None]]:
        """Apply each partition's acknowledgements, then persist the partitions they
        changed before answering (an answered acknowledgement survives fail-over)."""
        results: dict[PartitionKey, tuple[ErrorCode, str | None]] = {}
        changed: dict[PartitionKey, SharePartition] = {}
        now = wall_ms()
        for topic in self.req.get("topics") or ():
            topic_id = bytes(topic["topic_id"])
            for p in topic["partitions"]:
                batches = p.get("acknowledgement_batches") or ()
                if not batches:
                    continue
                key = (topic_id, p["partition_index"])
                partition, error = self._led(key)
                if partition is None:
                    results[key] = (error, None)
                    continue
                share = self.manager.existing(self.group_id, key)
                if share is None or share.leader_epoch != partition.leader_epoch:
                    results[key] = (ErrorCode.INVALID_RECORD_STATE, "nothing was acquired")
                    continue
                share.expire(now)
                results[key] = share.acknowledge(
                    self.member_id,
                    [
                        (b["first_offset"], b["last_offset"], b["acknowledge_types"])
                        for b in batches
                    ],
                    renew_at_ms=now if self.renew else None,
                )
                if results[key][0] is ErrorCode.NONE:
                    changed[key] = share
        if changed:
            written = await asyncio.gather(
                *(self.manager.persist(self.group_id, k, sp) for k, sp in changed.items()),
                return_exceptions=True,
            )
            for key, outcome in zip(changed, written, strict=True):
                if isinstance(outcome, KafkaError):
                    results[key] = (outcome.code, str(outcome))
                    if outcome.code is ErrorCode.FENCED_STATE_EPOCH:  # offsets were reset
                        self.manager.forget(self.group_id, *key)
                elif isinstance(outcome, BaseException):
                    raise outcome
        return results

    # ------------------------------------------------------------ acquire

    def _led(self, key: PartitionKey) -> tuple[Any, ErrorCode]:
        name = self.names.get(key[0])
        if name is None:
            return None, ErrorCode.UNKNOWN_TOPIC_ID
        partition = self.broker.replicas.get(name, key[1])
        if partition is None or not self.broker.leads(name, key[1]):
            return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
        return partition, ErrorCode.NONE

    async def _acquire_all(self, session: ShareSession) -> dict[PartitionKey, Body]:
        entries: dict[PartitionKey, Body] = {}
        remaining = int(self.req.get("max_bytes") or 0x7FFFFFFF)
        max_records = int(self.req.get("max_records") or 500)
        now = wall_ms()
        for key in sorted(session.partitions):
            partition, error = self._led(key)
            if partition is None:
                entries[key] = self._partition_entry(key, error, None)
                continue
            try:
                share = await self.manager.ensure(
                    self.group_id,
                    key,
                    partition.leader_epoch,
                    partial(self._start_offset, partition),
                )
                entries[key] = self._acquire(key, partition, share, remaining, max_records, now)
            except KafkaError as exc:
                entries[key] = self._partition_entry(key, exc.code, str(exc))
                continue
            records = entries[key]["records"]
            remaining -= len(records)
            max_records -= sum(
                r["last_offset"] - r["first_offset"] + 1 for r in entries[key]["acquired_records"]
            )
            if remaining <= 0 or max_records <= 0:
                break
        return entries

    def _start_offset(self, partition: Any) -> int:
        if self.manager.settings.auto_offset_reset == "earliest":
            return int(partition.log_start_offset)
        return int(partition.high_watermark)

    def _acquire(
        self,
        key: PartitionKey,
        partition: Any,
        share: SharePartition,
        max_bytes: int,
        max_records: int,
        now: int,
    ) -> Body:
        entry = self._partition_entry(key, ErrorCode.NONE, None)
        offset = max(share.fetch_offset(now), partition.log_start_offset)
        if offset >= partition.high_watermark:
            return entry
        read = partition.read_for_consumer(offset, max(max_bytes, 1), min_one=True)
        spans = batch_spans(read.records, max(offset, share.end_offset) + max_records)
        acquired = share.acquire(
            self.member_id,
            [(s.base_offset, s.last_offset) for s in spans],
            max_records,
            now,
            record_limit=self.record_limit,
        )
        if not acquired:
            return entry
        first, last = acquired[0].first_offset, acquired[-1].last_offset
        used = [s for s in spans if s.last_offset >= first and s.base_offset <= last]
        entry["records"] = cut(read.records, used[0].position, used[-1].position + used[-1].size)
        entry["acquired_records"] = [
            {
                "first_offset": r.first_offset,
                "last_offset": r.last_offset,
                "delivery_count": r.delivery_count,
            }
            for r in acquired
        ]
        return entry

    # ----------------------------------------------------------- response

    def _partition_entry(self, key: PartitionKey, error: ErrorCode, message: str | None) -> Body:
        leader = {"leader_id": -1, "leader_epoch": -1}
        name = self.names.get(key[0])
        partition = None if name is None else self.broker.replicas.get(name, key[1])
        if partition is not None:
            leader = {"leader_id": partition.leader_id, "leader_epoch": partition.leader_epoch}
        return {
            "partition_index": key[1],
            "error_code": int(error),
            "error_message": message,
            "acknowledge_error_code": 0,
            "acknowledge_error_message": None,
            "current_leader": leader,
            "records": b"",
            "acquired_records": [],
        }

    def _response(
        self,
        entries: dict[PartitionKey, Body],
        acks: dict[PartitionKey, tuple[ErrorCode, str | None]],
    ) -> Body:
        for key, (code, message) in acks.items():
            entry = entries.get(key) or self._partition_entry(key, ErrorCode.NONE, None)
            entry["acknowledge_error_code"] = int(code)
            entry["acknowledge_error_message"] = message
            entries[key] = entry
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "acquisition_lock_timeout_ms": self.manager.settings.limits.lock_duration_ms,
            "responses": _by_topic(entries),
            "node_endpoints": [],
        }


def _by_topic(entries: dict[PartitionKey, Body]) -> list[Body]:
    topics: dict[bytes, list[Body]] = {}
    for (topic_id, _), entry in sorted(entries.items()):
        topics.setdefault(topic_id, []).append(entry)
    return [{"topic_id": tid, "partitions": parts} for tid, parts in topics.items()]


def _top_error(code: ErrorCode, message: str, *, with_lock: bool) -> Body:
    body: Body = {
        "throttle_time_ms": 0,
        "error_code": int(code),
        "error_message": message,
        "responses": [],
        "node_endpoints": [],
    }
    if with_lock:
        body["acquisition_lock_timeout_ms"] = 0
    return body
