"""Requests to the active controller, wherever it runs.

Brokers send the controller their registration and heartbeats, and forward
the client requests that change metadata (CreateTopics, DeleteTopics,
CreatePartitions, configs, producer id blocks), as Kafka's brokers do, so a
client may talk to any node.  The active controller is the Raft leader; it
moves on failover, so a request that finds no leader, cannot reach it, or is
answered NOT_CONTROLLER is retried once the leader is known again, until its
deadline.  When this very process is the active controller the request is
handed over in-process: a single node never talks to itself over a socket.

An attempt that merely runs long is resent only for requests that are safe to
apply twice (heartbeats, registrations, ISR changes): a slow CreateTopics that
was resent after its attempt timeout came back TOPIC_ALREADY_EXISTS for a
topic the first attempt had just created.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from samsa.errors import DecodeError, ErrorCode
from samsa.net import ChannelError, ChannelPool
from samsa.protocol.envelope import ENVELOPE_KEY, RequestOrigin, unwrap_response, wrap_request

log = logging.getLogger("samsa.server")

Body = dict[str, Any]


class LocalController(Protocol):
    """The in-process controller, when this node is one."""

    def is_active(self) -> bool: ...

    def handle(
        self, api_key: int, version: int, body: Body, origin: RequestOrigin | None = None
    ) -> Awaitable[Body]: ...


class ControllerUnavailable(Exception):
    """No controller answered before the deadline."""


class ControllerLink:
    def __init__(
        self,
        node_id: int,
        leader: Callable[[], int | None],
        leader_changed: Callable[[], Awaitable[None]],
        channels: ChannelPool,
        resolve: Callable[[int], tuple[str, int] | None],
        local: LocalController | None = None,
        *,
        retry_backoff_ms: int = 50,
        attempt_timeout_ms: int = 2000,
    ) -> None:
        self.node_id = node_id
        self._leader = leader
        self._leader_changed = leader_changed
        self._channels = channels
        self._resolve = resolve
        self._local = local
        self.retry_backoff_ms = retry_backoff_ms
        self.attempt_timeout_ms = attempt_timeout_ms

    def active_controller(self) -> int | None:
        return self._leader()

    async def request(
        self,
        api_key: int,
        version: int,
        body: Body,
        *,
        timeout_ms: int = 30000,
        resend_when_slow: bool = True,
        origin: RequestOrigin | None = None,
    ) -> Body:
        """``resend_when_slow=False`` gives each attempt the whole remaining time;
        it is then resent only when the controller moved or the connection failed.
        ``origin``: the client a forwarded request comes from, when the controller
        must judge it (delegation tokens): it travels in an Envelope, as Kafka's
        ``ForwardingManager`` sends it."""
        deadline = time.monotonic() + timeout_ms / 1000
        last_error = "no controller is known yet"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ControllerUnavailable(f"controller request failed: {last_error}")
            leader = self._leader()
            if leader is None:
                await self._wait_for_leader(min(remaining, 1.0))
                continue
            local = self._local
            if leader == self.node_id and local is not None:
                if local.is_active():
                    response = await local.handle(api_key, version, body, origin)
                    if not not_controller(response):
                        return response
                last_error = "this node's controller is not active yet"
            else:
                address = self._resolve(leader)
                if address is None:
                    last_error = f"no address for controller {leader}"
                else:
                    channel = self._channels.to_address(*address)
                    attempt_ms = int(remaining * 1000)
                    if resend_when_slow:
                        attempt_ms = min(attempt_ms, self.attempt_timeout_ms)
                    try:
                        if origin is None:
                            answer = await self._attempt(
                                channel, api_key, version, body, attempt_ms
                            )
                        else:
                            answer = await self._attempt_enveloped(
                                channel, api_key, version, body, origin, attempt_ms
                            )
                    except ChannelError as exc:
                        last_error = str(exc)
                    else:
                        if answer is None:
                            last_error = f"the controller moved away from node {leader}"
                            continue
                        if not not_controller(answer):
                            return answer
                        last_error = f"node {leader} is no longer the controller"
            await self._wait_for_leader(min(self.retry_backoff_ms / 1000, remaining))

    async def _attempt(
        self, channel: Any, api_key: int, version: int, body: Body, timeout_ms: int
    ) -> Body | None:
        """One try at the current leader, given up when the leader changes (a hung
        controller must not hold a heartbeat until the broker's session expires)."""
        request = asyncio.ensure_future(
            channel.request(api_key, version, body, timeout_ms=timeout_ms)
        )
        changed = asyncio.ensure_future(self._leader_changed())
        try:
            await asyncio.wait({request, changed}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            request.cancel()  # the caller is stopping: the request goes with it
            raise
        finally:
            changed.cancel()
        if request.done():
            result: Body = request.result()
            return result
        request.cancel()
        return None

    async def _attempt_enveloped(
        self,
        channel: Any,
        api_key: int,
        version: int,
        body: Body,
        origin: RequestOrigin,
        timeout_ms: int,
    ) -> Body | None:
        """``_attempt`` with the request inside an Envelope; the inner answer."""
        envelope = wrap_request(api_key, version, body, origin, client_id=f"node-{self.node_id}")
        answer = await self._attempt(channel, ENVELOPE_KEY, 0, envelope, timeout_ms)
        if answer is None:
            return None
        if answer.get("response_data") is None:
            # Refused as a whole (NOT_CONTROLLER: retried like any other answer
            # saying so; CLUSTER_AUTHORIZATION_FAILED for a node the controller
            # does not trust): the inner API's answer with that error.
            return {"error_code": answer.get("error_code", ErrorCode.UNKNOWN_SERVER_ERROR)}
        try:
            return unwrap_response(api_key, version, answer)
        except DecodeError as exc:
            raise ChannelError(f"the controller's forwarded answer: {exc}") from None

    async def _wait_for_leader(self, seconds: float) -> None:
        # asyncio.wait, not wait_for: 3.11's wait_for can lose a cancellation
        # (samsa.eventloop.cancellation), and heartbeats wait here while a broker stops.
        changed = asyncio.ensure_future(self._leader_changed())
        try:
            await asyncio.wait({changed}, timeout=seconds)
        finally:
            changed.cancel()


def not_controller(response: Body) -> bool:
    """True when a controller API's answer says "not the active controller".

    Most controller APIs carry a top-level error code; CreateTopics and friends
    carry one per topic, and a non-active controller fails every one of them
    with NOT_CONTROLLER.
    """
    if response.get("error_code") == ErrorCode.NOT_CONTROLLER:
        return True
    for key in ("topics", "results", "filter_results"):
        items = response.get(key)
        if isinstance(items, list) and items:
            codes = {item.get("error_code") for item in items if isinstance(item, dict)}
            if codes == {ErrorCode.NOT_CONTROLLER}:
                return True
    return False
