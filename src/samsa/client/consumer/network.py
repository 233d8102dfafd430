"""Futures and blocking waits on top of NetworkClient (Kafka's ConsumerNetworkClient).

``NetworkClient`` only sends to nodes that are ``ready`` and reports results
through callbacks on the polling thread.  The consumer and the admin client
want "send this to node N, give me a future" and "wait for that future at most
T ms", so this wrapper keeps per-node queues of unsent requests, connects and
sends them as nodes become ready, fails them on connection failure or after
``request.timeout.ms``, and completes futures from the responses.

Threading: one ``RLock`` guards the wrapped client, because the consumer's
heartbeat thread polls the group coordinator's client while the application
thread may be joining the group through it.  ``wakeup()`` may be called from
any thread to cut a blocking poll short.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from samsa.client.errors import DisconnectedError, KafkaTimeoutError, ListenerSecurityError
from samsa.client.network.in_flight import ClientRequest, ClientResponse
from samsa.client.network.network_client import NetworkClient
from samsa.errors import ErrorCode, KafkaError

__all__ = ["ConsumerNetworkClient", "RequestFuture", "monotonic_ms"]


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


class RequestFuture:
    """The eventual decoded response body of one request, or the reason it failed."""

    __slots__ = ("_callbacks", "_done", "exception", "value")

    def __init__(self) -> None:
        self._done = False
        self.value: Any = None
        self.exception: BaseException | None = None
        self._callbacks: list[Callable[[RequestFuture], None]] = []

    @property
    def done(self) -> bool:
        return self._done

    @property
    def failed(self) -> bool:
        return self._done and self.exception is not None

    def complete(self, value: Any) -> None:
        if not self._done:
            self._done = True
            self.value = value
            self._fire()

    def fail(self, exc: BaseException) -> None:
        if not self._done:
            self._done = True
            self.exception = exc
            self._fire()

    def add_callback(self, fn: Callable[[RequestFuture], None]) -> None:
        """Run ``fn(self)`` when done (at once if already done), on the completing thread."""
        if self._done:
            fn(self)
        else:
            self._callbacks.append(fn)

    def result(self) -> Any:
        if not self._done:
            raise RuntimeError("future is not done")
        if self.exception is not None:
            raise self.exception
        return self.value

    def _fire(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn(self)


class ConsumerNetworkClient:
    """Request futures, unsent queues and bounded waits over one NetworkClient."""

    def __init__(
        self,
        client: NetworkClient,
        request_timeout_ms: int,
        clock_ms: Callable[[], int] = monotonic_ms,
    ) -> None:
        self.client = client
        self.metadata = client.metadata
        self.request_timeout_ms = request_timeout_ms
        self.lock = threading.RLock()
        self._clock = clock_ms
        self._unsent: dict[int, deque[ClientRequest]] = {}

    def now_ms(self) -> int:
        return self._clock()

    def send(
        self, node_id: int, api_key: int, body: dict[str, Any], timeout_ms: int | None = None
    ) -> RequestFuture:
        """Queue a request for ``node_id``; it goes out on a later ``poll``.

        ``timeout_ms`` overrides request.timeout.ms for this request only.
        """
        future = RequestFuture()
        request = ClientRequest(
            node_id,
            api_key,
            body,
            callback=lambda resp: self._on_response(resp, future),
            created_ms=self._clock(),
            timeout_ms=timeout_ms,
        )
        with self.lock:
            self._unsent.setdefault(node_id, deque()).append(request)
        return future

    @staticmethod
    def _on_response(resp: ClientResponse, future: RequestFuture) -> None:
        if resp.body is not None:
            future.complete(resp.body)
        elif resp.version_mismatch is not None:
            future.fail(
                KafkaError(
                    ErrorCode.UNSUPPORTED_VERSION,
                    f"api {resp.request.api_key}: {resp.version_mismatch}",
                )
            )
        elif resp.timed_out:
            future.fail(KafkaTimeoutError(f"request to node {resp.request.node_id} timed out"))
        else:
            future.fail(DisconnectedError(f"node {resp.request.node_id} disconnected"))

    def pending(self, node_id: int) -> int:
        """Requests for ``node_id`` not yet answered (queued or in flight)."""
        queued = self._unsent.get(node_id)
        return (len(queued) if queued else 0) + self.client.in_flight_count(node_id)

    def poll(self, timeout_ms: int, now_ms: int | None = None) -> None:
        """Send what can be sent, wait up to ``timeout_ms`` for I/O, complete futures."""
        with self.lock:
            now = self._clock() if now_ms is None else now_ms
            self._try_send(now)
            self.client.poll(max(0, timeout_ms), now)
            now = self._clock()
            self._try_send(now)
            self._fail_expired(now)

    def wait(self, future: RequestFuture, timeout_ms: int) -> Any:
        """Poll until ``future`` is done; its value, its exception, or KafkaTimeoutError."""
        deadline = self._clock() + timeout_ms
        while not future.done:
            fatal = self.client.metadata.fatal
            if fatal is not None:  # a refused SASL login: waiting longer cannot help
                raise fatal
            left = deadline - self._clock()
            if left <= 0:
                raise KafkaTimeoutError(f"no response within {timeout_ms} ms")
            self.poll(min(left, 100))
        return future.result()

    def timed_out(self, what: str, timeout_ms: int) -> KafkaTimeoutError:
        """The error of a call that ran out of its ``timeout_ms`` (the whole of
        it, not what was left at the last try), with the likely reason when
        brokers closed our connections unanswered (a TLS or SASL listener)."""
        message = f"{what} within {timeout_ms} ms"
        security = self.client.security
        hint = self.client.states.peer_close_hint(
            tls=security.ssl_context is not None, sasl=security.sasl is not None
        )
        if hint is None:
            return KafkaTimeoutError(message)
        return ListenerSecurityError(f"{message}: {hint}")

    def wakeup(self) -> None:
        self.client.wakeup()

    def has_unsent(self) -> bool:
        """Whether a queued request still waits for a ``poll`` to go out."""
        return any(self._unsent.values())

    def least_loaded_node(self) -> int | None:
        with self.lock:
            return self.client.least_loaded_node(self._clock())

    def _try_send(self, now_ms: int) -> None:
        for node_id, queue in self._unsent.items():
            while queue:
                if self.client.ready(node_id, now_ms):
                    self.client.send(queue.popleft(), now_ms)
                elif self.client.connection_failed(node_id):
                    # The connect attempt failed: tell the callers now instead of
                    # letting them wait for the request timeout.
                    while queue:
                        req = queue.popleft()
                        assert req.callback is not None
                        req.callback(ClientResponse(req, now_ms, disconnected=True))
                else:
                    break

    def _fail_expired(self, now_ms: int) -> None:
        for queue in self._unsent.values():
            while queue and now_ms - queue[0].created_ms > self.request_timeout_ms:
                req = queue.popleft()
                assert req.callback is not None
                req.callback(ClientResponse(req, now_ms, timed_out=True))

    def close(self) -> None:
        with self.lock:
            self.client.close()
