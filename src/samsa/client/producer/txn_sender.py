"""The Sender thread's half of the transactional protocol: one step on the wire at a time.

Each Sender loop asks :meth:`TransactionalRequests.maybe_send` first; while a
step is in flight or backing off, produce requests go on as usual (batches of
partitions not yet in the transaction are held back by the manager).  A step
goes to its coordinator, found with FindCoordinator when unknown or after
NOT_COORDINATOR; retriable errors (COORDINATOR_LOAD_IN_PROGRESS,
CONCURRENT_TRANSACTIONS, disconnects) retry after ``retry.backoff.ms``.
"""

from __future__ import annotations

import logging
from typing import Any

from samsa.client.network.in_flight import ClientRequest, ClientResponse
from samsa.client.network.network_client import NetworkClient
from samsa.client.producer.transactions import (
    FIND_COORDINATOR,
    ProducerFencedError,
    TransactionalManager,
    TransactionStep,
    is_fenced,
    needs_new_coordinator,
)
from samsa.errors import ErrorCode, KafkaError

__all__ = ["TransactionalRequests"]

log = logging.getLogger(__name__)


class TransactionalRequests:
    def __init__(
        self, client: NetworkClient, txn: TransactionalManager, retry_backoff_ms: int
    ) -> None:
        self.client = client
        self.txn = txn
        self.retry_backoff_ms = retry_backoff_ms
        self.retry_after_ms = 0

    def maybe_send(self, now: int) -> bool:
        """Send the next step (or the FindCoordinator it needs); True if anything was sent."""
        txn = self.txn
        if txn.step_in_flight or now < self.retry_after_ms or txn.fatal_error is not None:
            return False
        step = txn.next_step()
        if step is None:
            return False
        node = txn.coordinators.get(step.coordinator)
        if node is None:
            return self._find_coordinator(step, now)
        if not self.client.ready(node, now):
            if self.client.connection_failed(node):
                txn.coordinators.pop(step.coordinator, None)
            return False
        txn.step_in_flight = True
        self.client.send(
            ClientRequest(
                node, step.api_key, step.build(), callback=lambda r: self._on_step(step, r),
                created_ms=now,
            ),
            now,
        )  # fmt: skip
        return True

    def _find_coordinator(self, step: TransactionStep, now: int) -> bool:
        node = self.client.least_loaded_node(now)
        if node is None or not self.client.ready(node, now):
            return False
        key_type, key = step.coordinator
        body = {"key": key, "key_type": key_type, "coordinator_keys": [key]}
        self.txn.step_in_flight = True
        self.client.send(
            ClientRequest(
                node, FIND_COORDINATOR, body, callback=lambda r: self._on_coordinator(step, r),
                created_ms=now,
            ),
            now,
        )  # fmt: skip
        return True

    def _on_coordinator(self, step: TransactionStep, resp: ClientResponse) -> None:
        self.txn.step_in_flight = False
        body: dict[str, Any] | None = resp.body
        if body is None:
            self._backoff(resp)
            return
        entry = body["coordinators"][0] if body.get("coordinators") else body
        code = ErrorCode(entry["error_code"])
        if code is ErrorCode.NONE:
            self.txn.coordinators[step.coordinator] = int(entry["node_id"])
        elif code.retriable:
            self._backoff(resp)
        else:
            self._fail(step, KafkaError(code, f"FindCoordinator for {step.coordinator[1]!r}"))

    def _on_step(self, step: TransactionStep, resp: ClientResponse) -> None:
        txn = self.txn
        txn.step_in_flight = False
        if resp.body is None:
            self._backoff(resp)
            return
        code = step.handle(resp.body)
        if code is None:
            txn.step_done(step)
        elif needs_new_coordinator(code):
            txn.coordinators.pop(step.coordinator, None)
            self._backoff(resp)
        elif code.retriable:
            log.debug("transactional request %d: %s; retrying", step.api_key, code.name)
            self._backoff(resp)
        elif is_fenced(code):
            error = ProducerFencedError(
                code,
                f"transactional id {txn.transactional_id!r} was taken over by a newer producer",
            )
            txn.fail_fatally(error)
            txn.step_done(step, error)
        else:
            self._fail(step, KafkaError(code, f"transactional request {step.api_key} failed"))

    def _fail(self, step: TransactionStep, error: KafkaError) -> None:
        self.txn.on_abortable_error(error)
        self.txn.step_done(step, error)

    def _backoff(self, resp: ClientResponse) -> None:
        self.retry_after_ms = resp.received_ms + self.retry_backoff_ms
