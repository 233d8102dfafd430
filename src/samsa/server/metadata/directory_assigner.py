"""A JBOD broker tells the controller which log dir holds each replica (KIP-858).

The controller can move the leaderships of a failed dir only if it knows which
partitions live there.  After every metadata change, this compares where each
hosted replica's log is with the ``directories`` of the committed image and
sends the differences (AssignReplicasToDirs) to the controller; the records
the controller writes come back as a metadata change, which finds nothing left
to send.  A failed send is retried after a backoff.  Only a broker with more
than one log dir sends anything: with one dir there is nothing to choose
between, and the single-dir default stays as it was.

A replica moving between dirs (replication/dir_moves) is left to its move,
which names the new dir itself (``assign_dir``) before the swap: until then
the metadata may name the dir the replica is going to, not the one it is in.
The broker hands this assigner only the partitions that are not moving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from samsa.controller.image.metadata_image import MetadataImage
from samsa.replication.partition import Partition

log = logging.getLogger("samsa.server")

ASSIGN_REPLICAS_TO_DIRS = 73
RETRY_BACKOFF_S = 0.5

Send = Callable[[int, int, dict[str, Any]], Awaitable[dict[str, Any]]]


class DirectoryAssigner:
    def __init__(
        self,
        node_id: int,
        directory_ids: dict[str, bytes],
        offline_dirs: Callable[[], Iterable[str]],
        image: Callable[[], MetadataImage],
        partitions: Callable[[], Iterable[Partition]],
        send: Send,
        broker_epoch: Callable[[], int],
    ) -> None:
        self.node_id = node_id
        self.directory_ids = directory_ids
        self._offline_dirs = offline_dirs
        self._image = image
        self._partitions = partitions
        self._send = send
        self._broker_epoch = broker_epoch
        self._in_flight: asyncio.Task[None] | None = None
        self._again = False

    @property
    def enabled(self) -> bool:
        return len(self.directory_ids) > 1

    def unassigned(self) -> dict[bytes, dict[bytes, list[int]]]:
        """Directory id -> topic id -> partitions the image places elsewhere."""
        image = self._image()
        offline = set(self._offline_dirs())
        wanted: dict[bytes, dict[bytes, list[int]]] = defaultdict(lambda: defaultdict(list))
        for partition in self._partitions():
            log_dir = str(partition.log.directory.parent)
            dir_id = self.directory_ids.get(log_dir)
            topic = image.topics.get(partition.topic)
            if dir_id is None or log_dir in offline or topic is None:
                continue
            registration = topic.partitions.get(partition.index)
            if registration is None or self.node_id not in registration.replicas:
                continue
            if registration.directory_of(self.node_id) != dir_id:
                wanted[dir_id][topic.topic_id].append(partition.index)
        return wanted

    def maybe_assign(self) -> None:
        """Send what the image does not know yet (one request at a time; a change
        that arrives meanwhile is looked at when it is answered)."""
        if not self.enabled:
            return
        if self._in_flight is not None and not self._in_flight.done():
            self._again = True
            return
        self._in_flight = asyncio.ensure_future(self._run())

    async def assign_dir(self, topic_id: bytes, partition: int, log_dir: str) -> bool:
        """Tell the controller now that one replica is in ``log_dir`` (a move's
        target); True once the controller recorded it."""
        dir_id = self.directory_ids.get(log_dir)
        if dir_id is None:
            return False
        return await self._assign({dir_id: {topic_id: [partition]}})

    async def stop(self) -> None:
        if self._in_flight is not None:
            self._in_flight.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._in_flight

    async def _run(self) -> None:
        while True:
            self._again = False
            wanted = self.unassigned()
            if not wanted:
                return
            if not await self._assign(wanted):
                await asyncio.sleep(RETRY_BACKOFF_S)  # the controller may be moving
            elif not self._again:
                return

    async def _assign(self, wanted: dict[bytes, dict[bytes, list[int]]]) -> bool:
        body = {
            "broker_id": self.node_id,
            "broker_epoch": self._broker_epoch(),
            "directories": [
                {
                    "id": dir_id,
                    "topics": [
                        {"topic_id": t, "partitions": [{"partition_index": p} for p in parts]}
                        for t, parts in topics.items()
                    ],
                }
                for dir_id, topics in wanted.items()
            ],
        }
        try:
            response = await self._send(ASSIGN_REPLICAS_TO_DIRS, 0, body)
        except Exception as exc:
            log.info("assigning replicas to log dirs failed (%s); retrying", exc)
            return False
        if response.get("error_code", 0):
            log.info("assigning replicas to log dirs: error %s; retrying", response["error_code"])
            return False
        count = sum(len(p) for topics in wanted.values() for p in topics.values())
        log.info("assigned %d replicas to their log dirs", count)
        return True
