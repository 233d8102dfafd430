"""The primary's writes to ``_schemas``: transactions of one fenced producer.

Only the primary writes, one command at a time, each command's records in one
transaction of a producer whose ``transactional.id`` every registry node shares
(``<registry.group.id>-primary``).  Opening the writer is InitProducerId,
which bumps the id's producer epoch: the transaction coordinator aborts the
open transaction of any earlier holder and refuses its later
AddPartitionsToTxn, Produce and EndTxn (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH).
So a node that was primary, lost the role while paused or cut off, and wakes
up still believing in it cannot commit a thing once a newer primary has
opened its writer: two primaries never both write, whatever the election
believed for a moment.  Readers read committed records only.

A new primary must also read to the end of ``_schemas`` before it plans a
write (schema ids are one past the highest ever stored): ``barrier`` commits
a NOOP record (Confluent's way) and returns its offset; once the node's state
has applied that offset it holds every record committed before.

Every call here blocks (the client's round trips): they run on one worker
thread of their own, never on the event loop.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from samsa.registry.records import RegistryKey
from samsa.registry.writes import Record

log = logging.getLogger("samsa.registry")


class StoreWriter:
    def __init__(
        self,
        client_config: dict[str, Any],
        topic: str,
        transactional_id: str,
        timeout_s: float,
        name: str,
    ) -> None:
        self.client_config = client_config
        self.topic = topic
        self.transactional_id = transactional_id
        self.timeout_s = timeout_s
        self.name = name
        self._producer: Any = None

    @property
    def is_open(self) -> bool:
        return self._producer is not None

    def open(self) -> None:
        """A new producer epoch for the shared transactional id: fences every older writer."""
        from samsa.client import Producer

        self.close()
        timeout_ms = int(self.timeout_s * 1000)
        request_ms = min(timeout_ms, int(self.client_config.get("request.timeout.ms", 30000)))
        producer = Producer(
            {
                **self.client_config,
                "client.id": f"{self.name}-writer",
                "transactional.id": self.transactional_id,
                "acks": "all",
                "linger.ms": 0,
                # A transaction's AddPartitionsToTxn answers CONCURRENT_TRANSACTIONS
                # while the last one's markers are written: retry soon, as Kafka's
                # producer does (20 ms), not after the default 100 ms.
                "retry.backoff.ms": 20,
                "max.block.ms": timeout_ms,
                "request.timeout.ms": request_ms,
                "delivery.timeout.ms": max(timeout_ms, request_ms + 1000),
            }
        )
        try:
            producer.init_transactions(self.timeout_s)
        except BaseException:
            with contextlib.suppress(Exception):
                producer.close(0)
            raise
        self._producer = producer
        log.info("schema registry: writing %s as %s", self.topic, self.transactional_id)

    def barrier(self) -> int:
        """Commit a NOOP record; its offset (everything committed before it is below)."""
        return self.write([Record(RegistryKey.noop().encode(), None)])

    def write(self, records: list[Record]) -> int:
        """Commit ``records`` in one transaction; the offset of the last one.

        Any failure closes the producer: the outcome of the transaction is then
        unknown, so the next write opens anew (aborting it if still open) and
        reads to the end again first."""
        producer = self._producer
        if producer is None:
            raise RuntimeError("the writer is not open")
        try:
            producer.begin_transaction()
            futures = [
                producer.send(self.topic, value=r.value, key=r.key, partition=0) for r in records
            ]
            producer.commit_transaction(self.timeout_s)
            offsets = [future.get(self.timeout_s).offset for future in futures]
        except BaseException:
            self.close()
            raise
        return max(offsets)

    def close(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            with contextlib.suppress(Exception):
                producer.close(2.0)
