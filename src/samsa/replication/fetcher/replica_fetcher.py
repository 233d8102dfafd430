"""One replica fetcher: the asyncio loop around a FetcherState (Kafka's ReplicaFetcherThread).

The loop only sends and waits; every decision is the FetcherState's.  Each
round: truncate what needs no request, ask OffsetForLeaderEpoch for
partitions that must find their divergence, send one Fetch for every
partition ready to fetch, execute the actions the answer turns into, and
repeat.  The leader holds a Fetch up to ``replica.fetch.wait.max.ms`` when
there is nothing new, so an idle fetcher costs one request per wait.  When no
partition can fetch (all backing off, or none left) the loop sleeps until the
earliest backoff ends or partitions change.

Requests go through ``samsa.net``: the channel to the leader is looked up in
the pool each round, so a leader that moved (new address in the metadata)
is reached at its new address by the next request.  A request that fails
(ChannelError: unreachable, timed out, hung up) backs the whole fetcher off
(its partitions all have that leader); nothing else changes.

Actions run on the event loop, synchronously, between requests: the logs
never see two fetch responses of one fetcher interleaved.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from samsa.errors import ErrorCode, KafkaError
from samsa.eventloop.cancellation import cancel_and_wait, wait_event
from samsa.net import ChannelError, ChannelPool
from samsa.replication.fetcher.state import FetcherState
from samsa.replication.fetcher.types import (
    FETCH_API_KEY,
    FETCH_VERSION,
    OFFSET_FOR_LEADER_EPOCH_API_KEY,
    OFFSET_FOR_LEADER_EPOCH_VERSION,
    AppendRecords,
    BuildRemoteLogAuxState,
    FailPartition,
    FetcherAction,
    FollowerLogs,
    InitialFetchState,
    TopicPartition,
    TruncateFullyAndStartAt,
    TruncateTo,
)

log = logging.getLogger(__name__)

__all__ = ["FollowerReplicas", "ReplicaFetcher", "carry_out"]

IDLE_WAIT_MS = 1000
"""How long an idle fetcher sleeps when nothing is waiting on a backoff."""


class FollowerReplicas(FollowerLogs, Protocol):
    """The local follower partitions a fetcher writes to (the ReplicaManager)."""

    def append_fetched(
        self,
        tp: TopicPartition,
        records: bytes | memoryview,
        leader_high_watermark: int,
        leader_log_start_offset: int,
    ) -> None: ...

    def truncate_to(self, tp: TopicPartition, offset: int) -> None: ...

    def truncate_fully_and_start_at(self, tp: TopicPartition, offset: int) -> None: ...

    def fetching_failed(self, tp: TopicPartition, error: ErrorCode) -> None: ...

    async def rebuild_from_remote(
        self,
        tp: TopicPartition,
        request: Callable[[int, int, dict[str, Any]], Awaitable[dict[str, Any]]],
        *,
        replica_id: int,
        leader_log_start_offset: int,
        current_leader_epoch: int,
    ) -> None:
        """Rebuild ``tp`` from the remote tier (see BuildRemoteLogAuxState);
        ``request`` asks the leader (raises ChannelError when it cannot)."""
        ...


def carry_out(replicas: FollowerReplicas, action: FetcherAction) -> None:
    """One decision of the fetcher done on the local replicas; raises what the
    replica raises (KafkaError, OSError) for the caller to report back."""
    if isinstance(action, AppendRecords):
        replicas.append_fetched(
            action.tp,
            action.records,
            action.leader_high_watermark,
            action.leader_log_start_offset,
        )
    elif isinstance(action, TruncateTo):
        replicas.truncate_to(action.tp, action.offset)
    elif isinstance(action, TruncateFullyAndStartAt):
        replicas.truncate_fully_and_start_at(action.tp, action.offset)
    elif isinstance(action, FailPartition):
        replicas.fetching_failed(action.tp, action.error)


class ReplicaFetcher:
    """Copies partitions from one leader; ``name`` is Kafka's thread name."""

    def __init__(
        self,
        name: str,
        state: FetcherState,
        channels: ChannelPool,
        replicas: FollowerReplicas,
        time_ms: Callable[[], int],
    ) -> None:
        self.name = name
        self.state = state
        self.leader_id = state.leader_id
        self._channels = channels
        self._replicas = replicas
        self._time_ms = time_ms
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._rebuilds: set[asyncio.Task[None]] = set()
        self.rounds = 0

    # ------------------------------------------------------------------ membership
    def add_partitions(self, initial: Mapping[TopicPartition, InitialFetchState]) -> None:
        self.state.add_partitions(initial, self._replicas)
        self._changed.set()

    def remove_partitions(self, tps: list[TopicPartition]) -> None:
        self.state.remove_partitions(tps)
        self._changed.set()

    def __len__(self) -> int:
        return len(self.state)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    def start_stopping(self) -> None:
        """Cancel the loop without waiting for it (it ends at its next await)."""
        if self._task is not None:
            self._task.cancel()
        for rebuild in self._rebuilds:
            rebuild.cancel()

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)
        rebuilds, self._rebuilds = list(self._rebuilds), set()
        for rebuild in rebuilds:
            await cancel_and_wait(rebuild)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        log.info("%s started", self.name)
        try:
            while True:
                try:
                    did_work = await self._round()
                except (asyncio.CancelledError, KeyboardInterrupt):
                    raise
                except Exception:
                    log.exception("%s: fetch round failed", self.name)
                    did_work = False
                if not did_work:
                    await self._idle()
        finally:
            log.info("%s stopped", self.name)

    async def _idle(self) -> None:
        now = self._time_ms()
        wake_at = self.state.next_wakeup_ms(now)
        wait_ms = IDLE_WAIT_MS if wake_at is None else min(IDLE_WAIT_MS, max(wake_at - now, 1))
        self._changed.clear()
        await wait_event(self._changed, wait_ms / 1000)

    # ------------------------------------------------------------------ one round
    async def _round(self) -> bool:
        """One pass; False when there was nothing to send (the caller sleeps)."""
        state, replicas = self.state, self._replicas
        self._execute(state.truncate_without_epochs(replicas))
        sent_any = False
        epoch_plan = state.build_epoch_request(self._time_ms(), replicas)
        if epoch_plan is not None:
            sent_any = True
            body = await self._request(
                OFFSET_FOR_LEADER_EPOCH_API_KEY,
                OFFSET_FOR_LEADER_EPOCH_VERSION,
                epoch_plan.body,
            )
            if body is not None:
                self._execute(
                    state.handle_epoch_response(epoch_plan, body, self._time_ms(), replicas)
                )
        fetch_plan = state.build_fetch(self._time_ms(), replicas)
        if fetch_plan is not None:
            sent_any = True
            body = await self._request(FETCH_API_KEY, FETCH_VERSION, fetch_plan.body)
            if body is not None:
                self._execute(
                    state.handle_fetch_response(fetch_plan, body, self._time_ms(), replicas)
                )
        self.rounds += 1
        return sent_any

    async def _rebuild(self, action: BuildRemoteLogAuxState) -> None:
        """Rebuild a partition from the remote tier beside the fetch rounds (the
        partition stays paused meanwhile), then let it fetch again."""
        failed = True
        try:
            await self._replicas.rebuild_from_remote(
                action.tp,
                self._ask_leader,
                replica_id=self.state.replica_id,
                leader_log_start_offset=action.leader_log_start_offset,
                current_leader_epoch=action.current_leader_epoch,
            )
            failed = False
        except (KafkaError, ChannelError, OSError) as exc:
            log.warning(
                "%s: rebuilding %s-%d from the remote tier failed: %s", self.name, *action.tp, exc
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: rebuilding %s-%d from the remote tier failed", self.name, *action.tp)
        finally:
            self.state.resume(action.tp, self._time_ms(), failed=failed)
            self._changed.set()

    async def _ask_leader(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        channel = self._channels.channel(self.leader_id)
        if channel is None:
            raise ChannelError(f"no address for broker {self.leader_id}")
        return await channel.request(api_key, version, body)

    async def _request(
        self, api_key: int, version: int, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        channel = self._channels.channel(self.leader_id)
        if channel is None:
            log.warning("%s: no address for broker %d", self.name, self.leader_id)
            self.state.handle_request_failure(self._time_ms())
            return None
        try:
            return await channel.request(api_key, version, body)
        except ChannelError as exc:
            log.info("%s: request to broker %d failed: %s", self.name, self.leader_id, exc)
            self.state.handle_request_failure(self._time_ms())
            return None

    def _execute(self, actions: list[FetcherAction]) -> None:
        replicas = self._replicas
        for action in actions:
            if isinstance(action, BuildRemoteLogAuxState):
                task = asyncio.ensure_future(self._rebuild(action))
                self._rebuilds.add(task)
                task.add_done_callback(self._rebuilds.discard)
                continue
            try:
                carry_out(replicas, action)
            except KafkaError as exc:
                log.warning("%s: %s failed: %s", self.name, type(action).__name__, exc)
                self.state.action_failed(action, exc.code, self._time_ms())
            except OSError as exc:
                log.error("%s: %s failed: %s", self.name, type(action).__name__, exc)
                self.state.action_failed(action, ErrorCode.KAFKA_STORAGE_ERROR, self._time_ms())
