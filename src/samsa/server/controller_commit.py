"""The active controller's records into the Raft log, done only once applied.

A write is answered when the loader has replayed its records into this node's
image, not when Raft accepted them: a client never hears "done" about a change
a failover could still lose, and the next write sees this one.  Several
records of one atomic write go as a KIP-868 transaction, so every node applies
them whole or (cut short by a failover, then aborted) not at all.

Apart from ``controller_server`` because it is the one path every write takes
to the log, whatever the request: the server decides when a write may run (its
lock, being active) and which records it makes; this module only gets them
committed, or says leadership was lost on the way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from samsa.controller.controller_result import ControllerResult
from samsa.controller.steps import PARTITIONS_PER_STEP
from samsa.eventloop.loop_slices import in_slices
from samsa.protocol.metadata_records import MetadataRecord, encode_metadata_record, make_record
from samsa.raft.driver import RaftDriver
from samsa.raft.errors import NotLeaderError
from samsa.server.metadata.loader import MetadataLoader


class RecordCommitter:
    """Commits through ``raft`` and waits for ``loader``; ``lost_leadership`` is
    called when Raft refuses an append because this node no longer leads."""

    def __init__(
        self,
        node_id: int,
        raft: RaftDriver,
        loader: MetadataLoader,
        lost_leadership: Callable[[], None],
    ) -> None:
        self._node_id = node_id
        self._raft = raft
        self._loader = loader
        self._lost_leadership = lost_leadership

    async def commit_result(self, result: ControllerResult) -> bool:
        """Commit ``result``'s records: in one transaction if it is atomic, else
        as they are, so that every node's loader may replay them a step at a
        time (metadata_loader.RECORDS_PER_STEP) and serve requests in between.

        Safe because a non-atomic result's records each stand alone (see
        ControllerResult): a reader between two steps sees some partitions
        already moved and others not yet, every one of them in a state the
        controller wrote whole; and a failover before the last of them
        commits loses only the rest, which the next controller computes again
        from the image."""
        if result.atomic:
            return await self.commit(result.records)
        if not result.records:
            return True
        return await self.append_and_wait(result.records)

    async def commit(self, records: list[MetadataRecord]) -> bool:
        """Append, wait for the loader to apply; False if leadership was lost."""
        if not records:
            return True
        if len(records) > 1:
            # One write, several records: a transaction, so every node applies it
            # whole or (cut short by a failover, then aborted) not at all.
            records = [
                make_record("BeginTransactionRecord"),
                *records,
                make_record("EndTransactionRecord"),
            ]
        return await self.append_and_wait(records)

    async def append_and_wait(self, records: list[MetadataRecord]) -> bool:
        """The records as they are (no transaction around them), applied; False
        if leadership was lost first."""
        payloads: list[bytes] = []
        async for part in in_slices(records, PARTITIONS_PER_STEP):
            # Encoded a slice at a time: a thousand records are ~10 ms of the loop.
            payloads.extend(encode_metadata_record(record) for record in part)
        try:
            last = self._raft.append(payloads)
        except NotLeaderError:
            self._lost_leadership()
            return False
        epoch = self._raft.epoch
        waiting = asyncio.ensure_future(self._loader.wait_applied(last))
        while not waiting.done():
            changed = asyncio.ensure_future(self._raft.wait_leader_change())
            await asyncio.wait({waiting, changed}, return_when=asyncio.FIRST_COMPLETED)
            changed.cancel()
            if not waiting.done() and (
                self._raft.leader_id != self._node_id or self._raft.epoch != epoch
            ):
                waiting.cancel()
                return False
        return True
