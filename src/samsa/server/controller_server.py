"""The active controller: requests through the QuorumController into the Raft log.

Kafka's QuorumController runs every write on one thread; here writes take one
asyncio lock.  A write computes its records against the committed image,
appends them through Raft as one batch, waits until the loader has replayed
them into the image (``controller_commit``), and only then answers: a client
never hears "done" about a change a failover could still lose, and the next
write sees this one.

A node is the active controller when it leads the Raft quorum AND its image
has caught up with everything written before its epoch (the entry that opened
the epoch is applied); before that its image could be stale, so it answers
NOT_CONTROLLER and callers retry.  Timed work (fencing brokers whose
heartbeats stopped, finishing reassignments, preferred-leader rebalancing)
runs from ``poll`` a few times a second while active.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.quorum_controller import QuorumController
from samsa.errors import DecodeError, ErrorCode
from samsa.eventloop.cancellation import acquire_within, cancel_and_wait
from samsa.eventloop.held_loop_clock import HeldLoopClock
from samsa.eventloop.loop_slices import run_in_steps
from samsa.protocol.envelope import RequestOrigin, unwrap_request, wrap_response
from samsa.protocol.metadata_records import make_record
from samsa.raft.driver import RaftDriver
from samsa.server import controller_token_apis as token_apis
from samsa.server.controller_commit import RecordCommitter
from samsa.server.metadata.loader import MetadataLoader
from samsa.server.not_controller import (
    ADD_RAFT_VOTER,
    ALLOCATE_PRODUCER_IDS,
    ALTER_CLIENT_QUOTAS,
    ALTER_CONFIGS,
    ALTER_PARTITION,
    ALTER_PARTITION_REASSIGNMENTS,
    ALTER_USER_SCRAM_CREDENTIALS,
    ASSIGN_REPLICAS_TO_DIRS,
    BROKER_HEARTBEAT,
    BROKER_REGISTRATION,
    CREATE_ACLS,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_ACLS,
    DELETE_TOPICS,
    DESCRIBE_QUORUM,
    ELECT_LEADERS,
    INCREMENTAL_ALTER_CONFIGS,
    LIST_PARTITION_REASSIGNMENTS,
    QUORUM_APIS,
    UNREGISTER_BROKER,
    UNREGISTER_CONTROLLER,
    UPDATE_FEATURES,
    not_controller_response,
)

if TYPE_CHECKING:
    from samsa.security.authorizer.standard import StandardAuthorizer

log = logging.getLogger("samsa.controller")

Body = dict[str, Any]

CONTROLLER_APIS = frozenset(
    {
        CREATE_TOPICS,
        DELETE_TOPICS,
        ALTER_CONFIGS,
        CREATE_PARTITIONS,
        ELECT_LEADERS,
        INCREMENTAL_ALTER_CONFIGS,
        ALTER_PARTITION_REASSIGNMENTS,
        LIST_PARTITION_REASSIGNMENTS,
        ALTER_PARTITION,
        BROKER_REGISTRATION,
        BROKER_HEARTBEAT,
        UNREGISTER_BROKER,
        ALLOCATE_PRODUCER_IDS,
        ALTER_USER_SCRAM_CREDENTIALS,
        CREATE_ACLS,
        DELETE_ACLS,
        ALTER_CLIENT_QUOTAS,
        ASSIGN_REPLICAS_TO_DIRS,
        UPDATE_FEATURES,
        UNREGISTER_CONTROLLER,
    }
)
POLL_INTERVAL_MS = 200


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class ControllerServer:
    def __init__(
        self,
        node_id: int,
        raft: RaftDriver,
        loader: MetadataLoader,
        config: ControllerConfig,
        *,
        voter_nodes: Callable[[], list[dict[str, Any]]] = list,
        clock: Callable[[], int] | None = None,
        authorizer: StandardAuthorizer | None = None,
    ) -> None:
        """``clock``: milliseconds for broker sessions; by default the wall clock
        less the time this node's event loop was held (``HeldLoopClock``):
        heartbeats sent meanwhile wait unread in its sockets, so that time is
        not the brokers' silence.  The poll forgave only its own late wake-ups
        before, not a hold while it waited for the write lock behind a commit,
        and a broker whose own loop was held too was fenced alive."""
        self._voter_nodes = voter_nodes
        self.node_id = node_id
        self._authorizer = authorizer
        """Judges forwarded requests as their clients' (delegation tokens)."""
        self._raft = raft
        self._loader = loader
        self._config = config
        self._held_loop_clock: HeldLoopClock | None = None
        if clock is None:
            clock = self._held_loop_clock = HeldLoopClock(wall_ms)
        self._clock = clock
        self._clock_task: asyncio.Task[None] | None = None
        self.controller = QuorumController(loader.image, config, random.Random())
        self.controller.features.node_id = node_id
        self._write_lock = asyncio.Lock()
        self._commits = RecordCommitter(node_id, raft, loader, self._deactivate)
        self._epoch_start: int | None = None
        self._active = False
        self._poll_task: asyncio.Task[None] | None = None
        self._activation_task: asyncio.Task[None] | None = None

    # -- the publisher side: leadership and image changes --------------------------------

    def on_leader_change(self, leader_id: int | None, epoch: int) -> None:
        if leader_id == self.node_id:
            # Everything below the log end now (the LeaderChange entry of this
            # epoch included) must be in the image before this node may write.
            self._epoch_start = self._raft.log.end_offset - 1
            self._activation_task = asyncio.ensure_future(self._activate(epoch))
        else:
            self._deactivate()

    async def _activate(self, epoch: int) -> None:
        start = self._epoch_start
        assert start is not None
        await self._loader.wait_applied(start)
        if self._raft.leader_id != self.node_id or self._raft.epoch != epoch:
            return
        if self._loader.has_open_transaction:
            # The previous controller died inside a write: end it as aborted, so
            # no node ever applies its first half.
            log.warning("controller: aborting the transaction the previous controller left open")
            if not await self._commits.append_and_wait(
                [make_record("AbortTransactionRecord", reason="failover")]
            ):
                return
        if self._held_loop_clock is not None and self._clock_task is None:
            self._clock_task = self._held_loop_clock.start()
        self.controller.activate(self._clock())
        seeds = self.controller.scram.seed_records(self._config.scram_seeds)
        if seeds and not await self._commits.commit(seeds):
            return
        self._active = True
        log.info("node %d is the active controller (epoch %d)", self.node_id, epoch)
        if self._poll_task is None:
            self._poll_task = asyncio.ensure_future(self._poll_loop())

    def _deactivate(self) -> None:
        if self._active:
            log.info("node %d is no longer the active controller", self.node_id)
        self._active = False
        self._epoch_start = None

    def on_delta(self, delta: MetadataDelta) -> None:
        pass

    def on_image(self, image: MetadataImage) -> None:
        # The image object is rebuilt in place; the control managers keep
        # indexes of their own only for in-memory session state.
        pass

    def is_active(self) -> bool:
        return self._active and self._raft.leader_id == self.node_id

    async def stop(self) -> None:
        self._active = False
        tasks = (self._poll_task, self._activation_task, self._clock_task)
        await cancel_and_wait(t for t in tasks if t is not None)

    # -- requests -----------------------------------------------------------------------

    async def handle_envelope(self, envelope: Body) -> Body:
        """An EnvelopeRequest: a client's request a broker forwarded with who sent
        it.  Only the delegation token APIs travel so; anything else, or an
        envelope that does not decode, is refused whole, as Kafka refuses it."""
        try:
            inner = unwrap_request(envelope)
        except DecodeError as exc:
            log.warning("controller: refused an envelope: %s", exc)
            code = (
                ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE
                if "principal" in str(exc)
                else ErrorCode.INVALID_REQUEST
            )
            return {"response_data": None, "error_code": code}
        header = inner.header
        if header.api_key not in token_apis.TOKEN_APIS:
            return {"response_data": None, "error_code": ErrorCode.INVALID_REQUEST}
        if not self.is_active():
            return {"response_data": None, "error_code": ErrorCode.NOT_CONTROLLER}
        answer = await self.handle(header.api_key, header.api_version, inner.body, inner.origin)
        return wrap_response(header.api_key, header.api_version, header.correlation_id, answer)

    async def handle(
        self, api_key: int, version: int, body: Body, origin: RequestOrigin | None = None
    ) -> Body:
        """Answer one controller request (from a broker or forwarded from a client;
        ``origin`` is the client of a forwarded delegation token request)."""
        if not self.is_active():
            return not_controller_response(api_key, body)
        if api_key in token_apis.TOKEN_APIS:
            refused = token_apis.refusal(api_key, body, origin, self._authorizer)
            if refused is not None:
                return refused
        if api_key in QUORUM_APIS:
            return await self._quorum(api_key, version, body)
        controller = self.controller
        if api_key == LIST_PARTITION_REASSIGNMENTS:
            result = controller.list_partition_reassignments(body)
            return result.response or {}
        if api_key == BROKER_HEARTBEAT:
            return await self._broker_heartbeat(body)
        async with self._write_lock:
            if not self.is_active():
                return not_controller_response(api_key, body)
            now = self._clock()
            if api_key in (CREATE_TOPICS, CREATE_PARTITIONS):
                steps = (
                    controller.create_topics_in_steps(body)
                    if api_key == CREATE_TOPICS
                    else controller.create_partitions_in_steps(body)
                )
                result = await run_in_steps(steps)
                if not self.is_active():  # lost the quorum between two steps
                    return not_controller_response(api_key, body)
            elif api_key == DELETE_TOPICS:
                result = controller.delete_topics(body)
            elif api_key == ALTER_CONFIGS:
                result = controller.alter_configs(body)
            elif api_key == INCREMENTAL_ALTER_CONFIGS:
                result = controller.incremental_alter_configs(body)
            elif api_key == ALLOCATE_PRODUCER_IDS:
                result = controller.allocate_producer_ids(body)
            elif api_key == ALTER_CLIENT_QUOTAS:
                result = controller.alter_client_quotas(body)
            elif api_key == BROKER_REGISTRATION:
                result = controller.register_broker(body, self._raft.log.end_offset, now)
            elif api_key == UNREGISTER_BROKER:
                result = controller.unregister_broker(body)
            elif api_key == ALTER_PARTITION:
                result = controller.alter_partition(body)
            elif api_key == ELECT_LEADERS:
                result = controller.elect_leaders(body)
            elif api_key == ALTER_PARTITION_REASSIGNMENTS:
                result = controller.alter_partition_reassignments(body)
            elif api_key == ALTER_USER_SCRAM_CREDENTIALS:
                result = controller.alter_user_scram_credentials(body)
            elif api_key == CREATE_ACLS:
                result = controller.create_acls(body)
            elif api_key == DELETE_ACLS:
                result = controller.delete_acls(body)
            elif api_key == ASSIGN_REPLICAS_TO_DIRS:
                result = controller.assign_replicas_to_dirs(body)
            elif api_key == UPDATE_FEATURES:
                result = controller.update_features(body, version)
            elif api_key == UNREGISTER_CONTROLLER:
                result = controller.unregister_controller(body, self.node_id)
            elif api_key in token_apis.TOKEN_APIS:
                assert origin is not None
                result = token_apis.run(controller, api_key, body, origin)
            else:
                raise ValueError(f"api key {api_key} is not a controller API")
            if not await self._commits.commit_result(result):
                return not_controller_response(api_key, body)
        return result.response or {}

    async def _broker_heartbeat(self, body: Body) -> Body:
        """A heartbeat renews its broker's session when it arrives, and waits its
        turn behind other writes (Raft commits) for at most half a heartbeat
        interval; past that it renews the session again and is answered
        REQUEST_TIMED_OUT, so the broker sends the next one at once (Kafka's
        ``processExpiredBrokerHeartbeat``).  A broker sends one heartbeat at a
        time: while one waited seconds behind a commit of thousands of
        partition changes, no other came, its session expired, and the poll
        queued behind the same commit fenced a live broker (which moved its
        thousands of leaderships: the next long commit)."""
        cluster = self.controller.cluster
        broker_id, broker_epoch = body["broker_id"], body["broker_epoch"]
        cluster.note_contact(broker_id, broker_epoch, self._clock())
        wait_s = self._config.broker_heartbeat_interval_ms / 2000
        if not await acquire_within(self._write_lock, wait_s):
            cluster.note_contact(broker_id, broker_epoch, self._clock())
            log.info(
                "heartbeat of broker %d waited %d ms behind other writes: session renewed, "
                "answered REQUEST_TIMED_OUT",
                broker_id,
                wait_s * 1000,
            )
            return expired_heartbeat_response()
        try:
            if not self.is_active():
                return not_controller_response(BROKER_HEARTBEAT, body)
            result = self.controller.broker_heartbeat(body, self._clock())
            if not await self._commits.commit_result(result):
                return not_controller_response(BROKER_HEARTBEAT, body)
        finally:
            self._write_lock.release()
        return result.response or {}

    async def _quorum(self, api_key: int, version: int, body: Body) -> Body:
        """The quorum's own admin calls, reaching this node in-process (forwarded)."""
        from samsa.raft.rpc import wire

        if api_key == DESCRIBE_QUORUM:
            return wire.describe_quorum_response(self._raft.describe_quorum(), self._voter_nodes())
        request = wire.decode_request(api_key, version, body)
        if api_key == ADD_RAFT_VOTER:
            response = await self._raft.add_voter(
                request.voter_id,  # type: ignore[union-attr]
                request.voter_directory_id,  # type: ignore[union-attr]
                request.listeners,  # type: ignore[union-attr]
                request.timeout_ms,  # type: ignore[union-attr]
            )
        else:
            response = await self._raft.remove_voter(
                request.voter_id,  # type: ignore[union-attr]
                request.voter_directory_id,  # type: ignore[union-attr]
            )
        return wire.encode_response(api_key, version, response, self._raft.listener_name)

    async def _poll_loop(self) -> None:
        while True:
            await asyncio.sleep(POLL_INTERVAL_MS / 1000)
            if not self.is_active():
                continue
            try:
                async with self._write_lock:
                    if not self.is_active():
                        continue
                    result: ControllerResult = self.controller.poll(
                        self._clock(), token_apis.wall_ms()
                    )
                    await self._commits.commit_result(result)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("controller: timed work failed")


def expired_heartbeat_response() -> Body:
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.REQUEST_TIMED_OUT,
        "is_caught_up": False,
        "is_fenced": True,
        "should_shut_down": False,
    }
