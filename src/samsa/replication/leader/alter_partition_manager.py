"""Sends partition leaders' ISR changes to the controller: Kafka's AlterPartitionManager.

Leaders propose ISR changes one partition at a time; this batches whatever is
queued into one AlterPartition request, with at most one request in flight,
so a broker leading thousands of partitions sends a handful of requests when
a follower dies, not thousands.  Each partition's answer goes back to its
callback; a callback that asks for a retry gets its change queued again after
``retry_backoff_ms``.  A request that fails as a whole (the controller is
unreachable, has moved, or answers with a top-level error) is retried for
every change in it after the backoff.

How the request reaches the controller is not this module's business: the
node wiring passes ``send``, an async callable from request body to response
body (AlterPartition v3 fields: the body also carries ``new_isr`` so a v2
encoder works).  Runs on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from samsa.errors import ErrorCode
from samsa.eventloop.cancellation import cancel_and_wait
from samsa.replication.leader.isr_state import LeaderAndIsr

log = logging.getLogger(__name__)

__all__ = ["AlterPartitionCallback", "AlterPartitionManager", "AlterPartitionSender"]

AlterPartitionSender = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
AlterPartitionCallback = Callable[[LeaderAndIsr | ErrorCode], bool]
"""Gets the controller's answer for one partition; returns True to send it again."""


@dataclass(frozen=True, slots=True)
class _Change:
    topic_id: bytes
    partition_index: int
    sent: LeaderAndIsr
    callback: AlterPartitionCallback


class AlterPartitionManager:
    def __init__(
        self,
        broker_id: int,
        broker_epoch: Callable[[], int],
        send: AlterPartitionSender,
        *,
        retry_backoff_ms: int = 100,
    ) -> None:
        self.broker_id = broker_id
        self._broker_epoch = broker_epoch
        self._send = send
        self.retry_backoff_ms = retry_backoff_ms
        self._unsent: dict[tuple[bytes, int], _Change] = {}
        self._task: asyncio.Task[None] | None = None
        self._retries: set[asyncio.TimerHandle] = set()
        self._closed = False

    @property
    def pending(self) -> int:
        """Changes queued and not yet sent (in flight ones are not counted)."""
        return len(self._unsent)

    def submit(
        self,
        topic_id: bytes,
        partition_index: int,
        sent: LeaderAndIsr,
        callback: AlterPartitionCallback,
    ) -> bool:
        """Queue a change (False once closed).  A change still waiting to be sent
        for the same partition is replaced: the partition moved on (new metadata
        reset its pending state) and only its latest proposal means anything."""
        if self._closed:
            return False
        self._unsent[(topic_id, partition_index)] = _Change(
            topic_id, partition_index, sent, callback
        )
        self._maybe_send()
        return True

    def _maybe_send(self) -> None:
        if self._task is None and self._unsent and not self._closed:
            self._task = asyncio.ensure_future(self._send_batch())

    def _request(self, batch: dict[tuple[bytes, int], _Change]) -> dict[str, Any]:
        broker_epoch = self._broker_epoch()
        topics: dict[bytes, list[dict[str, Any]]] = {}
        for change in batch.values():
            sent = change.sent
            topics.setdefault(change.topic_id, []).append(
                {
                    "partition_index": change.partition_index,
                    "leader_epoch": sent.leader_epoch,
                    "new_isr": list(sent.isr),
                    "new_isr_with_epochs": [
                        {
                            "broker_id": b,
                            "broker_epoch": broker_epoch if b == self.broker_id else -1,
                        }
                        for b in sent.isr
                    ],
                    "leader_recovery_state": sent.leader_recovery_state,
                    "partition_epoch": sent.partition_epoch,
                }
            )
        return {
            "broker_id": self.broker_id,
            "broker_epoch": broker_epoch,
            "topics": [{"topic_id": t, "partitions": p} for t, p in topics.items()],
        }

    async def _send_batch(self) -> None:
        batch, self._unsent = self._unsent, {}
        try:
            try:
                response = await self._send(self._request(batch))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("AlterPartition of %d partitions failed: %s; retrying", len(batch), exc)
                await self._requeue_after_backoff(batch)
                return
            top = response.get("error_code", 0)
            if top != ErrorCode.NONE:
                log.warning(
                    "AlterPartition of %d partitions refused with %s; retrying",
                    len(batch),
                    _name(top),
                )
                await self._requeue_after_backoff(batch)
                return
            self._distribute(batch, response)
        finally:
            self._task = None
            self._maybe_send()

    async def _requeue_after_backoff(self, batch: dict[tuple[bytes, int], _Change]) -> None:
        await asyncio.sleep(self.retry_backoff_ms / 1000)
        for key, change in batch.items():
            self._unsent.setdefault(key, change)

    def _distribute(
        self, batch: dict[tuple[bytes, int], _Change], response: dict[str, Any]
    ) -> None:
        answered: dict[tuple[bytes, int], LeaderAndIsr | ErrorCode] = {}
        for topic in response.get("topics") or ():
            topic_id = bytes(topic["topic_id"])
            for p in topic.get("partitions") or ():
                key = (topic_id, p["partition_index"])
                code = p.get("error_code", 0)
                answered[key] = (
                    _error(code)
                    if code != ErrorCode.NONE
                    else LeaderAndIsr(
                        p["leader_id"],
                        p["leader_epoch"],
                        tuple(p["isr"]),
                        p["partition_epoch"],
                        p.get("leader_recovery_state", 0),
                    )
                )
        for key, change in batch.items():
            result = answered.get(key, ErrorCode.UNKNOWN_SERVER_ERROR)
            try:
                retry = change.callback(result)
            except Exception:
                log.exception("AlterPartition callback for %s failed", key)
                continue
            if retry:
                self._retry_later(change)

    def _retry_later(self, change: _Change) -> None:
        loop = asyncio.get_running_loop()

        def requeue() -> None:
            self._retries.discard(handle)
            self.submit(change.topic_id, change.partition_index, change.sent, change.callback)

        handle = loop.call_later(self.retry_backoff_ms / 1000, requeue)
        self._retries.add(handle)

    async def close(self) -> None:
        self._closed = True
        for handle in self._retries:
            handle.cancel()
        self._retries.clear()
        task, self._task = self._task, None
        await cancel_and_wait(task)


def _error(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


def _name(code: int) -> str:
    return _error(code).name
