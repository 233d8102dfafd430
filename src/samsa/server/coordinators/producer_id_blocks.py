"""Producer ids for InitProducerId, in blocks from the active controller.

Kafka's brokers ask the controller for a block of 1000 ids at a time
(AllocateProducerIds); the block is a ProducerIdsRecord in the metadata log,
so no id is ever handed out twice, by any broker, across any restart.  A
restart abandons the rest of the block in use, as in Kafka.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from samsa.errors import ErrorCode, KafkaError

ALLOCATE_PRODUCER_IDS = 67

Forward = Callable[[int, int, dict[str, Any]], Awaitable[dict[str, Any]]]


class ProducerIdBlocks:
    def __init__(self, broker_id: int, broker_epoch: Callable[[], int], forward: Forward) -> None:
        self._broker_id = broker_id
        self._broker_epoch = broker_epoch
        self._forward = forward
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def allocate(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                await self._fetch_block()
            pid = self._next
            self._next += 1
            return pid

    async def _fetch_block(self) -> None:
        body = {"broker_id": self._broker_id, "broker_epoch": self._broker_epoch()}
        response = await self._forward(ALLOCATE_PRODUCER_IDS, 0, body)
        code = response.get("error_code", 0)
        if code:
            raise KafkaError(ErrorCode(code), "the controller handed out no producer ids")
        self._next = int(response["producer_id_start"])
        self._end = self._next + int(response["producer_id_len"])
