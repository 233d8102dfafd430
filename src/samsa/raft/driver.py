"""The asyncio driver: runs a ``RaftMachine`` on the broker's event loop.

The machine decides, the driver does.  Every machine call returns actions that
must run in order (the vote on disk before the answer, the log flushed before
the high watermark counts it), so actions from all sources (requests,
responses, timers, appends) go through one queue drained by one task.  Sends
run concurrently (each in its own task, the machine allows one in flight per
destination) and come back as ``receive_response`` / ``request_failed``;
log flushes run in a thread, in order, and come back as ``flushed``.  The
clock is monotonic less the time this loop was held (``HeldLoopClock``); the
machine only ever compares times it was given.

What the driver does not know: sockets (``transport``: the node gives it a way
to send a wire request to an address) and what committed entries mean
(``listener``: the metadata loader on every node).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from samsa.eventloop.cancellation import cancel_and_wait, wait_event
from samsa.eventloop.held_loop_clock import HeldLoopClock
from samsa.raft.actions import (
    Action,
    FlushLog,
    HighWatermarkAdvanced,
    LeaderChanged,
    LoadSnapshot,
    PersistElectionState,
    Respond,
    Send,
)
from samsa.raft.machine import RaftMachine
from samsa.raft.messages import QuorumInfo, RaftRequest, RaftResponse, ReplicaDescription
from samsa.raft.persistence.quorum_state_file import write_election_state
from samsa.raft.persistence.raft_log import RaftLog, Snapshot
from samsa.raft.rpc import wire

log = logging.getLogger("samsa.raft")

Transport = Callable[[str, int, int, int, dict[str, Any], int], Awaitable[dict[str, Any]]]
"""(host, port, api_key, version, body, timeout_ms) -> response body; raises on failure."""


class RaftListener(Protocol):
    """The state machine above Raft (the metadata loader)."""

    def handle_commit(self, high_watermark: int) -> None: ...

    def handle_load_snapshot(self, snapshot: Snapshot) -> None: ...

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None: ...


class RaftDriver:
    def __init__(
        self,
        machine: RaftMachine,
        log_: RaftLog,
        state_dir: Path,
        transport: Transport,
        listener: RaftListener,
        *,
        cluster_id: str,
        listener_name: str,
        bootstrap_servers: Sequence[tuple[str, int]] = (),
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.machine = machine
        self.log = log_
        self._state_dir = state_dir
        self._transport = transport
        self._listener = listener
        self.cluster_id = cluster_id
        self.listener_name = listener_name
        self._bootstrap = list(bootstrap_servers)
        self._held_loop_clock: HeldLoopClock | None = None
        if clock is None:
            clock = self._held_loop_clock = HeldLoopClock()
        self._clock = clock
        self._queue: deque[Action] = deque()
        self._queue_ready = asyncio.Event()
        self._wake_timer = asyncio.Event()
        self._leader_changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._sends: set[asyncio.Task[None]] = set()
        self._flushes: set[asyncio.Task[None]] = set()
        self._flusher: ThreadPoolExecutor | None = None
        self._stopped = False

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> None:
        ticking = [] if self._held_loop_clock is None else [self._held_loop_clock.start()]
        self._feed(self.machine.start(self._clock()))
        self._tasks = [
            asyncio.ensure_future(self._execute_loop()),
            asyncio.ensure_future(self._timer_loop()),
            *ticking,
        ]

    async def stop(self, *, resign_timeout_s: float = 1.0) -> None:
        """Hand leadership over (EndQuorumEpoch) if leading, then stop."""
        if self._stopped:
            return
        if self.machine.is_leader:
            self._feed(self.machine.resign(self._clock()))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._drain(), resign_timeout_s)
        self._stopped = True
        # Flushes finish (a stop keeps what was written durable), then the rest stops.
        await asyncio.gather(*self._flushes, return_exceptions=True)
        await cancel_and_wait([*self._tasks, *self._sends])
        if self._flusher is not None:
            self._flusher.shutdown(wait=True)
            self._flusher = None

    async def _drain(self) -> None:
        while self._queue or self._sends or self._flushes:
            await asyncio.sleep(0.01)

    # -- what the node uses ------------------------------------------------------

    @property
    def leader_id(self) -> int | None:
        return self.machine.leader_id

    @property
    def epoch(self) -> int:
        return self.machine.epoch

    @property
    def high_watermark(self) -> int:
        return self.machine.high_watermark

    async def wait_leader_change(self) -> None:
        """Resolve at the next leader change (or leader knowledge change)."""
        self._leader_changed.clear()
        await self._leader_changed.wait()

    def append(self, payloads: list[bytes]) -> int:
        """Append as leader; returns the last offset (raises NotLeaderError elsewhere)."""
        offset, actions = self.machine.append(self._clock(), payloads)
        self._feed(actions)
        return offset

    def create_snapshot(self, end_offset: int, data: bytes) -> None:
        self.machine.create_snapshot(end_offset, data)
        self.machine.delete_before_snapshot()

    def describe_quorum(self) -> QuorumInfo:
        """DescribeQuorum with its timestamps in wall-clock milliseconds, as Kafka
        reports them (the machine runs on the monotonic clock)."""
        now = self._clock()
        info = self.machine.describe_quorum(now)
        shift = time.time_ns() // 1_000_000 - now

        def wall(replica: ReplicaDescription) -> ReplicaDescription:
            return dataclasses.replace(
                replica,
                last_fetch_timestamp=replica.last_fetch_timestamp + shift
                if replica.last_fetch_timestamp >= 0
                else -1,
                last_caught_up_timestamp=replica.last_caught_up_timestamp + shift
                if replica.last_caught_up_timestamp >= 0
                else -1,
            )

        return dataclasses.replace(
            info,
            current_voters=tuple(wall(r) for r in info.current_voters),
            observers=tuple(wall(r) for r in info.observers),
        )

    async def handle_request(self, source_id: int, request: RaftRequest) -> RaftResponse:
        """Give an inbound Raft request to the machine; wait for its answer."""
        future: asyncio.Future[RaftResponse] = asyncio.get_running_loop().create_future()
        self._feed(self.machine.receive_request(self._clock(), source_id, request, future))
        return await future

    async def add_voter(
        self, voter_id: int, directory_id: uuid.UUID | None, endpoints: Any, timeout_ms: int
    ) -> RaftResponse:
        future: asyncio.Future[RaftResponse] = asyncio.get_running_loop().create_future()
        actions = self.machine.add_voter(
            self._clock(), voter_id, directory_id, endpoints, future, timeout_ms
        )
        self._feed(actions)
        return await future

    async def remove_voter(self, voter_id: int, directory_id: uuid.UUID | None) -> RaftResponse:
        future: asyncio.Future[RaftResponse] = asyncio.get_running_loop().create_future()
        self._feed(self.machine.remove_voter(self._clock(), voter_id, directory_id, future))
        return await future

    # -- the action queue --------------------------------------------------------

    def _feed(self, actions: list[Action]) -> None:
        if actions:
            self._queue.extend(actions)
            self._queue_ready.set()
        self._wake_timer.set()

    async def _execute_loop(self) -> None:
        while True:
            await self._queue_ready.wait()
            self._queue_ready.clear()
            while self._queue:
                action = self._queue.popleft()
                try:
                    self._execute(action)
                except Exception:
                    log.exception("raft: failed to execute %s", type(action).__name__)

    def _execute(self, action: Action) -> None:
        if isinstance(action, Send):
            task = asyncio.ensure_future(self._send(action))
            self._sends.add(task)
            task.add_done_callback(self._sends.discard)
        elif isinstance(action, Respond):
            future = action.reply_to
            assert isinstance(future, asyncio.Future)
            if not future.done():
                future.set_result(action.message)
        elif isinstance(action, PersistElectionState):
            write_election_state(self._state_dir, action.election)
        elif isinstance(action, FlushLog):
            task = asyncio.ensure_future(self._flush(action.up_to_offset))
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)
        elif isinstance(action, HighWatermarkAdvanced):
            self._listener.handle_commit(action.offset)
        elif isinstance(action, LeaderChanged):
            log.info(
                "raft: leader of epoch %d is %s",
                action.epoch,
                "unknown" if action.leader_id is None else f"node {action.leader_id}",
            )
            self._listener.handle_leader_change(action.leader_id, action.epoch)
            self._leader_changed.set()
        elif isinstance(action, LoadSnapshot):
            snapshot = self.log.load_snapshot(action.snapshot_id)
            if snapshot is None:
                raise RuntimeError(f"snapshot {action.snapshot_id} vanished before loading")
            self._listener.handle_load_snapshot(snapshot)
        else:  # pragma: no cover - the Action union is closed
            raise TypeError(f"unknown action {action!r}")

    async def _flush(self, up_to_offset: int) -> None:
        """fsync the metadata log in a thread of its own, then tell the machine.

        On the loop, an fsync held it for as long as the disk took: 20-55 ms
        on a machine busy with other writes, while 1,000 partitions were
        created (a 100 kB batch on every node), and every produce waited.
        The machine allows it (``FlushLog`` may complete later: only flushed
        entries count towards the high watermark, and a follower fetches
        again only once flushed); one thread keeps the flushes in order, and
        the log's own lock orders them with appends and truncations."""
        if self._flusher is None:
            self._flusher = ThreadPoolExecutor(1, thread_name_prefix="raft-flush")
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._flusher, self.log.flush, up_to_offset)
        except Exception:
            log.exception("raft: flushing the log up to %d failed", up_to_offset)
            return
        self._feed(self.machine.flushed(self._clock(), up_to_offset))

    def _address(self, destination_id: int) -> tuple[str, int] | None:
        if destination_id < 0:
            index = -2 - destination_id
            return self._bootstrap[index] if 0 <= index < len(self._bootstrap) else None
        endpoints = self.machine.endpoints(destination_id)
        for endpoint in endpoints:
            if endpoint.listener == self.listener_name:
                return endpoint.host, endpoint.port
        return (endpoints[0].host, endpoints[0].port) if endpoints else None

    async def _send(self, action: Send) -> None:
        address = self._address(action.destination_id)
        if address is None:
            self._feed(self.machine.request_failed(self._clock(), action.request_id))
            return
        api_key, version, body = wire.encode_request(action.message, self.cluster_id)
        timeout_ms = wire.request_timeout_ms(action.message, self.machine)
        try:
            response = await self._transport(*address, api_key, version, body, timeout_ms)
            message = wire.decode_response(
                api_key, version, response, self.listener_name, action.message
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("raft: request to %s failed: %s", address, exc)
            if not self._stopped:
                self._feed(self.machine.request_failed(self._clock(), action.request_id))
            return
        log.debug(
            "raft: %s -> node %d answered %s",
            type(action.message).__name__,
            action.destination_id,
            message,
        )
        if not self._stopped:
            self._feed(self.machine.receive_response(self._clock(), action.request_id, message))

    async def _timer_loop(self) -> None:
        while True:
            self._wake_timer.clear()
            deadline = self.machine.next_deadline()
            if deadline is not None:
                delay = max(0.0, (deadline - self._clock()) / 1000)
                await wait_event(self._wake_timer, delay)
            else:
                await self._wake_timer.wait()
            now = self._clock()
            next_deadline = self.machine.next_deadline()
            if next_deadline is not None and next_deadline <= now:
                self._feed(self.machine.poll(now))
