"""The Sender thread's half of idempotence: getting a producer id with InitProducerId.

Each Sender loop of an idempotent (not transactional) producer asks
:meth:`ProducerIdRequests.maybe_send` first: when the TransactionManager needs
an id (none yet, or an epoch bump once nothing is in flight) and its backoff
has passed, InitProducerId goes to the least loaded broker.  A disconnect or a
retriable error tries again after ``retry.backoff.ms``; a fenced epoch starts
over with a fresh id; anything else is fatal for the producer.

Apart from the Sender, whose job is moving batches, as the transactional steps
are (``txn_sender``): a producer without idempotence never sends it.
Thread-safety: used only on the Sender thread.
"""

from __future__ import annotations

import logging

from samsa.client.network.in_flight import ClientRequest, ClientResponse
from samsa.client.network.network_client import NetworkClient
from samsa.client.producer.idempotence import TransactionManager
from samsa.errors import ErrorCode, KafkaError

__all__ = ["ProducerIdRequests"]

# Logged as the Sender's, where these lines always were.
log = logging.getLogger("samsa.client.producer.sender")

INIT_PRODUCER_ID = 22


class ProducerIdRequests:
    def __init__(
        self, client: NetworkClient, txn: TransactionManager, retry_backoff_ms: int
    ) -> None:
        self.client = client
        self.txn = txn
        self.retry_backoff_ms = retry_backoff_ms

    def maybe_send(self, now: int) -> bool:
        """Send InitProducerId if one is due; False if none is, or no node is ready yet."""
        txn = self.txn
        if not txn.needs_init_producer_id() or now < txn.retry_after_ms:
            return False
        node = self.client.least_loaded_node(now)
        if node is None or not self.client.ready(node, now):
            return False
        version = self.client.api_version(node, INIT_PRODUCER_ID)
        if version is None:
            txn.fail_fatally(
                KafkaError(ErrorCode.UNSUPPORTED_VERSION, "broker does not support InitProducerId")
            )
            return False
        txn.init_in_flight = True
        request = ClientRequest(
            node,
            INIT_PRODUCER_ID,
            txn.init_request_body(version),
            callback=self._on_response,
            created_ms=now,
        )
        self.client.send(request, now)
        return True

    def _on_response(self, resp: ClientResponse) -> None:
        txn = self.txn
        txn.init_in_flight = False
        if resp.body is None:
            # Disconnected: try again after the backoff.
            txn.retry_after_ms = resp.received_ms + self.retry_backoff_ms
            return
        code = ErrorCode(resp.body["error_code"])
        if code is ErrorCode.NONE:
            txn.set_producer_id_and_epoch(resp.body["producer_id"], resp.body["producer_epoch"])
        elif code.retriable:
            log.info("InitProducerId failed with %s; retrying", code.name)
            txn.retry_after_ms = resp.received_ms + self.retry_backoff_ms
        elif code in (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED):
            txn.producer_id = -1  # start over with a fresh id
        else:
            txn.fail_fatally(KafkaError(code, "InitProducerId failed"))
