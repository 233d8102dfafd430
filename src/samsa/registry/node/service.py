"""One node's registry: the replayed state answers reads; writes go through the primary.

Start: ``_schemas`` is created if missing (one partition, compacted,
replication ``min(registry.topic.replication.factor, live brokers)`` with
``min.insync.replicas`` one less, at most 2, at least 1), as Confluent's
KafkaStore creates it; the reader replays it to its end; then the node joins
the election.  Nothing is answered before the replay is done.

Reads run on the event loop against the state (``RegistryApi.handle`` answers
from memory in well under a millisecond).  A write (``RegistryApi.is_write``):

* on the primary runs alone (a lock), against the state as it stands once
  every earlier write has been applied: plan the records, commit them in one
  transaction (``store_writer``, on a worker thread), wait until the reader
  has applied them, answer from the state.  After each election that makes
  this node primary anew, and after any failed write, the writer first
  re-opens (fencing any other) and commits a NOOP, and the state must reach
  it before the first plan: the new primary has read everything committed;
* elsewhere, when the local state already holds the answer and it changes
  nothing (a schema registered before: 200 with its id, what a serializer
  asks on every start), it is answered here; anything else is forwarded to
  the primary (``forwarding``), waiting out an election or a dead primary's
  expiry up to ``registry.timeout.ms``, then answered 50003/50004.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from samsa.errors import ErrorCode, KafkaError
from samsa.eventloop.cancellation import wait_event
from samsa.registry import errors
from samsa.registry.api import RegistryApi
from samsa.registry.api_http import Request, Response, error_response
from samsa.registry.node.broker_port import RegistryBroker
from samsa.registry.node.election import Election
from samsa.registry.node.forwarding import (
    FORWARDED_HEADER,
    ForwardingError,
    client_context,
    forward,
)
from samsa.registry.node.identity import Assignment, Identity
from samsa.registry.node.settings import RegistrySettings
from samsa.registry.node.store_reader import StoreReader
from samsa.registry.node.store_writer import StoreWriter
from samsa.registry.node.view import RegistryView
from samsa.registry.store import RegistryState

log = logging.getLogger("samsa.registry")

T = TypeVar("T")
FENCED = frozenset({ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH})
TOPIC_WAIT_S = 10.0
"""How long a node of a cluster waits for enough brokers before it creates ``_schemas``."""
POLL_S = 0.05


class RegistryService:
    def __init__(self, broker: RegistryBroker, settings: RegistrySettings) -> None:
        self.broker = broker
        self.settings = settings
        self.loop = asyncio.get_running_loop()
        self.state = RegistryState()
        self.api = RegistryApi(self.state)
        self.view = RegistryView(self.state)
        name = f"samsa-registry-{broker.node_id}"
        client = {
            **broker.kafka_client_config(),
            "request.timeout.ms": settings.request_timeout_ms,
        }
        self.reader = StoreReader(client, settings.topic, self.state, self.loop, name)
        self.writer = StoreWriter(
            client, settings.topic, settings.transactional_id, settings.timeout_s, name
        )
        self.election = Election(
            client,
            settings.group_id,
            settings.session_timeout_ms,
            settings.identity,
            self.loop,
            self._on_election,
            name,
        )
        self.primary: Identity | None = None
        self.is_primary = False
        self._primary_generation = -2
        self._synced = False
        self._lock = asyncio.Lock()
        self._role_changed = asyncio.Event()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"{name}-writer")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._forward_context = client_context(settings.truststore) if settings.truststore else None

    # -- lifecycle ------------------------------------------------------------------
    async def start(self) -> None:
        await self._ensure_topic()
        self.reader.start()
        await self.reader.caught_up.wait()
        self.election.start()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.election.stop()
        await self.reader.stop()
        with contextlib.suppress(Exception):
            await self._blocking(self.writer.close)
        self._executor.shutdown(wait=False)

    async def _ensure_topic(self) -> None:
        topic, broker = self.settings.topic, self.broker
        partitions = broker.topic_partitions(topic)
        if partitions is None:
            wanted = self.settings.replication_factor
            deadline = self.loop.time() + (TOPIC_WAIT_S if broker.expects_peers() else 0)
            while broker.live_brokers() < wanted and self.loop.time() < deadline:
                await asyncio.sleep(POLL_S)
            replicas = max(1, min(wanted, broker.live_brokers()))
            if replicas < wanted:
                log.warning(
                    "creating %s with replication factor %d (registry.topic.replication.factor"
                    "=%d, but %d broker(s) are up)",
                    topic,
                    replicas,
                    wanted,
                    replicas,
                )
            configs = {
                "cleanup.policy": "compact",
                "min.insync.replicas": str(max(1, min(2, replicas - 1))),
            }
            await broker.create_topic(topic, 1, replicas, configs)
        elif partitions != 1:
            raise errors.store_error(
                f"{topic} has {partitions} partitions: the registry's store needs exactly one"
            )
        deadline = self.loop.time() + self.settings.timeout_s
        while not broker.has_leader(topic, 0) and self.loop.time() < deadline:
            await asyncio.sleep(POLL_S)

    # -- answering ------------------------------------------------------------------
    async def handle(self, request: Request) -> Response:
        if not RegistryApi.is_write(request):
            result = self.api.handle(request)
            if isinstance(result, Response):
                return result
            return error_response(errors.store_error("a read planned a write"))
        return await self._write_anywhere(request)

    async def _write_anywhere(self, request: Request) -> Response:
        forwarded = FORWARDED_HEADER in request.headers
        if not self.is_primary:
            local = self.api.handle(request)
            if isinstance(local, Response) and local.status == 200:
                return local  # nothing to change: what the primary would answer too
        deadline = self.loop.time() + self.settings.timeout_s
        failure = "no primary has been elected"
        while True:
            waiting_for = self._role_changed
            if self.is_primary:
                answer = await self._write_within(request, deadline)
                if answer is not None:
                    return answer
                failure = "this node stopped being the primary"
            elif forwarded:
                return error_response(errors.unknown_leader("this node is not the primary"))
            elif self.primary is not None:
                try:
                    return await forward(
                        self.primary.url,
                        request,
                        node_id=self.broker.node_id,
                        context=self._forward_context,
                        timeout=max(0.1, deadline - self.loop.time()),
                    )
                except ForwardingError as exc:
                    failure = f"forwarding to the primary failed: {exc}"
                    log.info("schema registry: %s", failure)
                    if self.loop.time() >= deadline:
                        return error_response(errors.forwarding_error(failure))
                    # the primary may be dead: wait for the election to say so
                    await self._wait(waiting_for, min(1.0, deadline - self.loop.time()))
                    continue
            left = deadline - self.loop.time()
            if left <= 0:
                return error_response(errors.unknown_leader(failure))
            await self._wait(waiting_for, left)

    async def _write_within(self, request: Request, deadline: float) -> Response | None:
        """``_write_as_primary`` bounded by the write's deadline as a whole.

        Each step of a write has its own timeout, but they add up (open the
        writer, commit the barrier, catch up, commit, catch up), and writes queue
        on the lock behind one another: a primary whose store stalls (a node that
        woke from a pause still believing it leads, a coordinator that keeps
        answering "retry") would otherwise keep its clients waiting for minutes.
        Past the deadline the client hears 50002; the write's outcome is then
        unknown (its transaction may still commit), so the next write re-opens
        the writer and reads to the end before it plans anything."""
        try:
            return await asyncio.wait_for(
                self._write_as_primary(request), max(0.0, deadline - self.loop.time())
            )
        except TimeoutError:
            self._synced = False
            log.warning(
                "schema registry: a write did not finish within registry.timeout.ms (%d ms)",
                int(self.settings.timeout_s * 1000),
            )
            return error_response(
                errors.store_timeout(
                    f"not finished within registry.timeout.ms ({self.settings.timeout_s:g} s); "
                    "whether it was stored is unknown: read the subject to see"
                )
            )

    async def _write_as_primary(self, request: Request) -> Response | None:
        """The answer, or None when this node turned out not to be the primary."""
        async with self._lock:
            if not self.is_primary:
                return None
            try:
                if not await self._sync():
                    return error_response(errors.store_timeout())
                result = self.api.handle(request)
                if isinstance(result, Response) or not result.records:
                    return result if isinstance(result, Response) else result.finish()
                offset = await self._blocking(self.writer.write, result.records)
            except KafkaError as exc:
                self._synced = False
                if exc.code in FENCED:
                    self._fenced(exc)
                    return None
                log.warning("schema registry: a write to %s failed: %s", self.settings.topic, exc)
                return error_response(errors.store_error(f"Error writing to the store: {exc}"))
            except Exception as exc:
                self._synced = False
                log.warning("schema registry: a write to %s failed: %r", self.settings.topic, exc)
                return error_response(errors.store_error(f"Error writing to the store: {exc}"))
            if not await self.reader.wait_applied(offset, self.settings.timeout_s):
                self._synced = False
                return error_response(errors.store_timeout())
            return result.finish()

    async def _sync(self) -> bool:
        """Writer open and the state caught up with everything committed (under the lock)."""
        if self._synced:
            return True
        await self._blocking(self.writer.open)
        offset = await self._blocking(self.writer.barrier)
        if not await self.reader.wait_applied(offset, self.settings.timeout_s):
            return False
        self._synced = True
        log.info(
            "schema registry: primary at %s, caught up to offset %d of %s",
            self.settings.url,
            offset,
            self.settings.topic,
        )
        return True

    # -- the election ---------------------------------------------------------------
    def _on_election(self, assignment: Assignment | None, is_me: bool, generation: int) -> None:
        if assignment is None:
            self.is_primary, self.primary = False, None
        else:
            self.primary = assignment.primary
            if is_me:
                if generation != self._primary_generation + 1:
                    self._synced = False
                self._primary_generation = generation
                self._spawn(self._prepare())
            else:
                if self.is_primary or self._primary_generation >= 0:
                    self._spawn(self._blocking(self.writer.close))
                self._primary_generation = -2
            where = "this node" if is_me else (self.primary.url if self.primary else "nobody")
            log.info("schema registry: the primary is %s (generation %d)", where, generation)
            self.is_primary = is_me
        self._role_changed.set()
        self._role_changed = asyncio.Event()

    async def _prepare(self) -> None:
        """A new primary fences the old writer and reads to the end at once, not at its first write."""
        async with self._lock:
            if not self.is_primary:
                return
            try:
                await self._sync()
            except KafkaError as exc:
                self._synced = False
                if exc.code in FENCED:
                    self._fenced(exc)
                else:
                    log.warning("schema registry: taking the primary role failed: %s", exc)
            except Exception as exc:
                self._synced = False
                log.warning("schema registry: taking the primary role failed: %r", exc)

    def _fenced(self, exc: BaseException) -> None:
        log.warning("schema registry: another node writes now (%s); stepping down", exc)
        self.is_primary, self.primary = False, None  # until the group says who it is
        self._primary_generation = -2
        self.election.step_down()

    # -- helpers --------------------------------------------------------------------
    async def _blocking(self, work: Callable[..., T], *args: Any) -> T:
        return await self.loop.run_in_executor(self._executor, work, *args)

    async def _wait(self, event: asyncio.Event, timeout: float) -> None:
        await wait_event(event, max(0.0, timeout))

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
