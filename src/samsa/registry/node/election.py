"""Electing the primary: the registry nodes' Kafka group, run on a thread.

Every registry node is a member of one classic group (``registry.group.id``),
joined with Samsa's client group membership (find the coordinator, JoinGroup,
SyncGroup, a heartbeat thread) and Confluent's protocol type ``sr``; the
group leader picks the primary (``identity.choose``) and every member learns
it from its assignment.  When the primary dies the coordinator expels it once
its session (``registry.group.session.timeout.ms``) runs out, the others
rejoin and a new primary is chosen; a node that stops leaves the group, so the
role moves at once.  The election only says who *should* write: the writer's
producer epoch (``store_writer``) makes sure an old primary *cannot*.

The loop learns of changes through ``on_change(assignment, is_me, generation)``
(None when a rebalance starts: nobody is primary until it ends), called on
the loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from samsa.registry.node.identity import (
    DUPLICATE_URLS,
    Assignment,
    Identity,
    IdentityError,
    choose,
)
from samsa.registry.node.retrying_thread import RetryingThread

log = logging.getLogger("samsa.registry")

STEP_MS = 500

OnChange = Callable[[Assignment | None, bool, int], None]


class Election:
    def __init__(
        self,
        client_config: dict[str, Any],
        group_id: str,
        session_timeout_ms: int,
        identity: Identity,
        loop: asyncio.AbstractEventLoop,
        on_change: OnChange,
        name: str,
    ) -> None:
        self.client_config = client_config
        self.group_id = group_id
        self.session_timeout_ms = session_timeout_ms
        self.identity = identity
        self.loop = loop
        self.on_change = on_change
        self.name = name
        self._claim: str | None = None
        """The member id the last assignment made primary (this node's, or None): a
        rejoin under that id says so, so the role stays put.  A member expelled from
        the group rejoins under a new id and claims nothing."""
        self._stopping = threading.Event()
        self._rejoin = threading.Event()
        self._thread = RetryingThread(
            f"{self.name}-election",
            self._member_loop,
            self._stopping,
            lambda exc: f"registry group {self.group_id}: {exc}; joining again",
            after_failure=self.revoked,
        )

    def start(self) -> None:
        self._thread.start()

    async def stop(self) -> None:
        await self._thread.stop(10.0)

    def step_down(self) -> None:
        """The writer was fenced: another node writes now.  Stop claiming the role and rejoin."""
        self._claim = None
        self._rejoin.set()

    # -- callbacks from the membership (its threads) --------------------------------
    def metadata(self, member_id: str) -> bytes:
        claims = bool(member_id) and member_id == self._claim
        return replace(self.identity, leader=claims).encode()

    def assign(self, members: list[dict[str, Any]]) -> dict[str, bytes]:
        parsed = []
        for member in members:
            try:
                parsed.append((member["member_id"], Identity.decode(member["metadata"])))
            except IdentityError as exc:
                log.warning(
                    "registry group: member %s: bad metadata (%s)", member["member_id"], exc
                )
        assignment = choose(parsed)
        if assignment.error == DUPLICATE_URLS:
            log.error(
                "registry group: several nodes advertise one URL (%s); no primary until each "
                "sets its own registry.advertised.url",
                sorted(identity.url for _, identity in parsed),
            )
        data = assignment.encode()
        return {member["member_id"]: data for member in members}

    def assigned(self, data: bytes, member_id: str, generation: int) -> None:
        try:
            assignment = Assignment.decode(data) if data else Assignment()
        except IdentityError as exc:
            log.error("registry group: unreadable assignment (%s)", exc)
            assignment = Assignment()
        is_me = assignment.primary_member == member_id
        self._claim = member_id if is_me else None
        self._to_loop(assignment, is_me, generation)

    def revoked(self) -> None:
        self._to_loop(None, False, -1)

    def _to_loop(self, assignment: Assignment | None, is_me: bool, generation: int) -> None:
        try:
            self.loop.call_soon_threadsafe(self.on_change, assignment, is_me, generation)
        except RuntimeError:  # the loop closed while stopping
            self._stopping.set()

    # -- the thread (retried by ``RetryingThread`` until stopped) ------------------------
    def _member_loop(self) -> None:
        # Imported here, on the election's thread: the client (numpy under it)
        # costs a second or two to import, never spent on the broker's loop.
        from samsa.client.consumer.config import parse_consumer_config
        from samsa.client.consumer.consumer import build_network_client
        from samsa.registry.node.group_member import RegistryMember

        session = self.session_timeout_ms
        cfg = parse_consumer_config(
            {
                **self.client_config,
                "client.id": f"{self.name}-election",
                "group.id": self.group_id,
                "session.timeout.ms": session,
                "heartbeat.interval.ms": max(100, session // 4),
                "max.poll.interval.ms": max(30000, 3 * session),
            }
        )
        # Short requests (a coordinator that hangs is given up on within the session);
        # JoinGroup, parked by the coordinator for a whole rebalance, sets its own.
        client = build_network_client(cfg, cfg["request.timeout.ms"])
        member = RegistryMember(client, cfg, self)
        try:
            while not self._stopping.is_set():
                member.record_poll(client.now_ms())
                if self._rejoin.is_set():
                    self._rejoin.clear()
                    member.request_rejoin("this node's writer was fenced")
                deadline = client.now_ms() + STEP_MS
                if member.coordinator_unknown():
                    # The coordinator died (its heartbeats failed): find the new one,
                    # which heartbeats then reach; the group rebalances from there.
                    member.ensure_coordinator(deadline)
                elif member.ensure_active_group(deadline):
                    self._stopping.wait(STEP_MS / 1000)
        finally:
            try:
                member.maybe_leave_group("the schema registry is stopping")
            finally:
                member.close()
                client.close()
