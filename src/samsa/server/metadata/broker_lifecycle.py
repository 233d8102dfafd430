"""A broker's standing with the controller: registration, heartbeats, fencing.

Kafka's BrokerLifecycleManager in miniature.  A broker registers once per
process (a fresh incarnation id, so the controller can tell a restart from a
duplicate), then heartbeats every ``broker.heartbeat.interval.ms`` with the
metadata offset it has applied.  The controller keeps it fenced (no
leaderships, not in Metadata answers) until that offset has caught up with its
registration, and fences it again when heartbeats stop for
``broker.session.timeout.ms``.  A controlled shutdown is asked for through the
same heartbeat (``want_shut_down``) and is over when the controller answers
``should_shut_down``, i.e. once this broker leads no partition.

The broker epoch the controller hands out fences requests from an older
incarnation of this broker (a "zombie" that was paused and resumes).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from samsa.errors import ErrorCode
from samsa.eventloop.cancellation import cancel_and_wait, wait_event
from samsa.server.metadata.features import SUPPORTED_FEATURES

log = logging.getLogger("samsa.server")

BROKER_REGISTRATION = 62
BROKER_HEARTBEAT = 63
MAX_REGISTRATION_BACKOFF_MS = 200
"""Registration retries double from ``retry_backoff_ms`` up to this: short
against the 10 s a restart after SIGKILL may take, long against 20 ms."""


class BrokerState(enum.Enum):
    STARTING = "STARTING"
    RECOVERY = "RECOVERY"  # registered, fenced, catching up with metadata
    RUNNING = "RUNNING"  # unfenced
    PENDING_CONTROLLED_SHUTDOWN = "PENDING_CONTROLLED_SHUTDOWN"
    SHUTTING_DOWN = "SHUTTING_DOWN"


@dataclass(frozen=True)
class Registration:
    broker_id: int
    cluster_id: str
    listeners: list[tuple[str, str, int, int]]
    """(name, advertised host, advertised port, security protocol id)."""
    rack: str | None
    directory_id: bytes
    other_directory_ids: tuple[bytes, ...] = ()
    """The broker's other log dirs (JBOD); ``directory_id`` is the metadata log's."""


ControllerCall = Callable[[int, int, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Send a request to the active controller: (api_key, version, body) -> response."""


class BrokerLifecycle:
    def __init__(
        self,
        registration: Registration,
        controller: ControllerCall,
        metadata_offset: Callable[[], int],
        *,
        heartbeat_interval_ms: int,
        retry_backoff_ms: int = 100,
        recovery_poll_ms: int = 50,
        ready_to_unfence: bool = True,
    ) -> None:
        """``recovery_poll_ms``: how often a fenced broker asks while catching up
        or waiting for its controlled shutdown (it also asks at once when its
        metadata reaches its registration, see ``note_metadata_applied``).
        ``ready_to_unfence`` False: registered and heartbeating, but asking to
        stay fenced (``want_fence``) until ``set_ready_to_unfence``, as Kafka's
        broker does while its logs still load."""
        self.registration = registration
        self._controller = controller
        self._metadata_offset = metadata_offset
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.recovery_poll_ms = recovery_poll_ms
        self.incarnation_id = uuid.uuid4().bytes
        self.broker_epoch = -1
        self.state = BrokerState.STARTING
        self.unfenced = asyncio.Event()
        self.shutdown_granted = asyncio.Event()
        self.last_heartbeat_answer = time.monotonic()
        self._want_shut_down = False
        self.offline_log_dirs: list[bytes] = []
        """Directory ids of failed log dirs, told to the controller in every heartbeat."""
        self._wake = asyncio.Event()
        self._told_caught_up = -1
        """The broker epoch whose catching up woke a heartbeat already."""
        self._ready_to_unfence = ready_to_unfence
        self._last_refusal: int | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    def report_offline_log_dir(self, directory_id: bytes) -> None:
        """Tell the controller at once (a heartbeat now) that a log dir failed."""
        if directory_id not in self.offline_log_dirs:
            self.offline_log_dirs.append(directory_id)
        self._wake.set()

    def begin_controlled_shutdown(self) -> None:
        """Ask the controller to move this broker's leaderships away."""
        if self.state in (BrokerState.STARTING, BrokerState.SHUTTING_DOWN):
            self.shutdown_granted.set()
            return
        self._want_shut_down = True
        self.state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
        self._wake.set()

    def set_ready_to_unfence(self) -> None:
        """The broker can serve what it hosts: the next heartbeat, at once, no
        longer asks to stay fenced."""
        self._ready_to_unfence = True
        self._wake.set()

    def heartbeat_now(self) -> None:
        """Send the next heartbeat at once (metadata caught up: unfence sooner)."""
        self._wake.set()

    def note_metadata_applied(self, offset: int) -> None:
        """The broker applied the metadata up to ``offset``.  The controller
        unfences a broker once a heartbeat shows it has applied its own
        registration (whose offset is the broker epoch), so the heartbeat that
        shows it goes at once, as Kafka's BrokerLifecycleManager sends it on
        catching up, rather than on the next poll.  Once per registration: a
        controller that keeps it fenced after that is asked at the poll's pace,
        not on every metadata batch."""
        epoch = self.broker_epoch
        if self._told_caught_up == epoch or self.state is not BrokerState.RECOVERY:
            return
        if 0 <= epoch <= offset:
            self._told_caught_up = epoch
            self._wake.set()

    async def stop(self) -> None:
        self.state = BrokerState.SHUTTING_DOWN
        await cancel_and_wait(self._task)

    async def _register_until_accepted(self) -> None:
        """Register, backing off exponentially up to ``MAX_REGISTRATION_BACKOFF_MS``.
        After a SIGKILL the controller refuses the new incarnation until the old
        one's session expires (DUPLICATE_BROKER_REGISTRATION, seconds); asked
        every 20 ms, that was a hundred refusals, each waiting its turn behind
        the controller's writes (Kafka's lifecycle manager backs off too)."""
        backoff_ms = self.retry_backoff_ms
        while not await self._register():
            await asyncio.sleep(backoff_ms / 1000)
            backoff_ms = min(
                backoff_ms * 2, max(MAX_REGISTRATION_BACKOFF_MS, self.retry_backoff_ms)
            )

    async def _run(self) -> None:
        if self.broker_epoch < 0:
            await self._register_until_accepted()
        while True:
            # Cleared before asking: a wake-up while the heartbeat is on its way
            # (caught up, a failed log dir) sends the next one at once.
            self._wake.clear()
            ok = await self._heartbeat()
            delay = self.heartbeat_interval_ms if ok else self.retry_backoff_ms
            if ok and self.state in (BrokerState.RECOVERY, BrokerState.PENDING_CONTROLLED_SHUTDOWN):
                # Catching up, or waiting for leaderships to move away: the answer
                # changes within milliseconds, so ask again soon, not in seconds.
                delay = min(delay, self.recovery_poll_ms)
            await wait_event(self._wake, delay / 1000)

    async def _register(self) -> bool:
        reg = self.registration
        body = {
            "broker_id": reg.broker_id,
            "cluster_id": reg.cluster_id,
            "incarnation_id": self.incarnation_id,
            "listeners": [
                {
                    "name": name,
                    "host": host,
                    "port": port,
                    "security_protocol": protocol,
                }
                for name, host, port, protocol in reg.listeners
            ],
            # Every feature this node supports: UpdateFeatures checks each
            # registered broker's ranges before it finalizes a level.
            "features": [
                {"name": name, "min_supported_version": low, "max_supported_version": high}
                for name, (low, high) in sorted(SUPPORTED_FEATURES.items())
            ],
            "rack": reg.rack,
            "is_migrating_zk_broker": False,
            "log_dirs": [reg.directory_id, *reg.other_directory_ids],
            "previous_broker_epoch": -1,
        }
        try:
            response = await self._controller(BROKER_REGISTRATION, 0, body)
        except Exception as exc:
            log.debug("broker registration failed: %s", exc)
            return False
        code = response.get("error_code", 0)
        if code != ErrorCode.NONE:
            # Once per kind of refusal: the same one again is the wait going on.
            log.log(
                logging.DEBUG if code == self._last_refusal else logging.WARNING,
                "broker registration refused by the controller: %s",
                _error_name(code),
            )
            self._last_refusal = code
            return False
        self._last_refusal = None
        self.broker_epoch = int(response["broker_epoch"])
        self.state = BrokerState.RECOVERY
        log.info("broker %d registered with epoch %d", reg.broker_id, self.broker_epoch)
        return True

    async def _heartbeat(self) -> bool:
        body = {
            "broker_id": self.registration.broker_id,
            "broker_epoch": self.broker_epoch,
            "current_metadata_offset": self._metadata_offset(),
            "want_fence": not self._ready_to_unfence and self.state is BrokerState.RECOVERY,
            "want_shut_down": self._want_shut_down,
            "offline_log_dirs": list(self.offline_log_dirs),
        }
        try:
            # v1 carries offline_log_dirs (KIP-858); v0 as ever while every dir works.
            version = 1 if self.offline_log_dirs else 0
            response = await self._controller(BROKER_HEARTBEAT, version, body)
        except Exception as exc:
            log.debug("broker heartbeat failed: %s", exc)
            return False
        code = response.get("error_code", 0)
        if code == ErrorCode.STALE_BROKER_EPOCH or code == ErrorCode.BROKER_ID_NOT_REGISTERED:
            log.warning("controller no longer knows this broker's epoch; registering again")
            self.broker_epoch = -1
            self.unfenced.clear()
            await self._register_until_accepted()
            return True
        if code != ErrorCode.NONE:
            log.debug("broker heartbeat answered %s", _error_name(code))
            return False
        self.last_heartbeat_answer = time.monotonic()
        fenced = bool(response.get("is_fenced", True))
        if not fenced and self.state is BrokerState.RECOVERY:
            self.state = BrokerState.RUNNING
            log.info("broker %d is unfenced", self.registration.broker_id)
            self.unfenced.set()
        elif fenced and self.state is BrokerState.RUNNING:
            log.warning("broker %d was fenced by the controller", self.registration.broker_id)
            self.state = BrokerState.RECOVERY
            self.unfenced.clear()
        if response.get("should_shut_down") and self._want_shut_down:
            self.shutdown_granted.set()
        return True


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)
