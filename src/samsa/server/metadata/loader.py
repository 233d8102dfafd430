"""Committed metadata records into the image, on every node (Kafka's MetadataLoader).

Raft says how far the log is committed; the loader reads the entries up to
there, decodes the metadata records (control entries belong to Raft and are
skipped), replays them through a ``MetadataDelta`` into the node's one
``MetadataImage`` and tells the publishers what changed: the broker applies
the delta to its logs and replicas, the controller learns that its writes are
in.  The image changes only here, so every node that applied the same prefix
holds the same image.

Snapshots: a node loading a snapshot (at start, or a follower that fell behind
the leader's log start) rebuilds the image from it in place, so every holder
of the image keeps a valid reference, and publishers get a full reload instead
of a delta.  The loader also writes snapshots: once
``metadata.log.max.record.bytes.between.snapshots`` of records were applied
since the last one, the image is written out as records at the applied offset
and Raft may drop the log prefix below it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.snapshot_records import snapshot_records
from samsa.protocol.metadata_records import (
    MetadataRecord,
    decode_metadata_record,
    encode_metadata_record,
)
from samsa.raft.persistence.entry_codec import decode_entries, encode_payloads
from samsa.raft.persistence.raft_log import RaftLog, Snapshot
from samsa.raft.records import Entry
from samsa.server.metadata.heap import CollectorPause

log = logging.getLogger("samsa.server")

READ_ENTRIES = 4096

RECORDS_PER_STEP = 200
"""Records replayed (and published) per callback of the loop outside a
transaction: replaying one and applying it to the broker's partitions takes
0.1-0.3 ms here, so tens of ms per step."""

STOP_SNAPSHOT_BYTES = 64 * 1024
"""Records applied since the last snapshot that make a clean stop write one.

The size trigger (Kafka's 20 MB) lets a node that restarts often replay tens
of MB at every start: each restart of a broker of 10,000 partitions adds
20,000 leadership records (about 1.3 MB), and replaying 14 MB took 10 s of
CPU.  The next start loads the latest snapshot either way, so one written at
the stop only spares it the tail: worth it once the tail takes longer to
replay than the snapshot takes to write here (64 KB is about 1,000 records,
~0.1 s).  At 1 MB, the first clean stop of a fresh cluster of 10,000
partitions (creation plus controlled shutdown, ~0.9 MB) wrote none, and its
restart replayed all 30,000 records."""


STEPS_WITHOUT_COLLECTOR_S = 30.0
"""The longest the cyclic collector stays off while a run of steps replays."""


class MetadataPublisher(Protocol):
    def on_delta(self, delta: MetadataDelta) -> None: ...

    def on_image(self, image: MetadataImage) -> None:
        """The whole image was replaced (a snapshot was loaded)."""
        ...


class MetadataLoader:
    def __init__(
        self,
        raft_log: RaftLog,
        *,
        snapshot_bytes: int = 20 * 1024 * 1024,
        snapshot_interval_ms: int = 3_600_000,
        create_snapshot: Callable[[int, bytes], None] | None = None,
    ) -> None:
        self.image = MetadataImage()
        self._log = raft_log
        self.applied_offset = 0
        """Every committed entry below this offset is in the image."""
        self.applied_epoch = -1
        self._publishers: list[MetadataPublisher] = []
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._snapshot_bytes = snapshot_bytes
        self._snapshot_interval_ms = snapshot_interval_ms
        self._create_snapshot = create_snapshot
        self._bytes_since_snapshot = 0
        self._last_snapshot_ms = time.monotonic() * 1000
        self._transaction: list[tuple[MetadataRecord, int, int]] | None = None
        self.loaded = asyncio.Event()
        """Set once the first committed prefix (or snapshot) was applied."""
        self._commit_target = 0
        """The highest high watermark Raft reported: replayed up to, step by step."""
        self._next_step: asyncio.Handle | None = None
        self._collector = CollectorPause()
        """Off while a run of steps replays (see heap.CollectorPause)."""
        self._unpublished: MetadataDelta | None = None
        """A long transaction's delta, replayed into the image by the last step
        and published by the next (``_publish_and_go_on``)."""

    def add_publisher(self, publisher: MetadataPublisher) -> None:
        self._publishers.append(publisher)

    # -- what Raft tells us (RaftListener) ----------------------------------------

    def handle_commit(self, high_watermark: int) -> None:
        self._commit_target = max(self._commit_target, high_watermark)
        if self._next_step is None:
            self._replay()

    def _replay(self) -> None:
        """Replay committed entries, ``RECORDS_PER_STEP`` at a time when a loop
        runs: the rest is replayed in a later callback, so that thousands of
        leadership changes (a fenced broker of 10,000 partitions) do not hold
        the loop in one piece.  The records between transactions each stand
        alone (the controller writes several records without a transaction
        only where every prefix is a valid state: ControllerResult.atomic), so
        a reader between two steps sees a state the controller wrote.

        A step may also end inside a transaction (a CreateTopics of 1,000
        partitions is one): its records are read and decoded a step at a time
        -- decoding was half of the ~70 ms such a transaction held the loop --
        and held, not applied, so the image and the publishers still see the
        transaction whole or not at all (see ``_apply``): the step that reads
        its end replays what was held and publishes it as one delta."""
        self._next_step = None
        if self.applied_offset < self._log.start_offset:
            # The log moved past what we applied without a snapshot load: only a
            # snapshot can bring us there, and Raft loads one before this.
            log.warning(
                "metadata: applied offset %d is below the log start %d; waiting for a snapshot",
                self.applied_offset,
                self._log.start_offset,
            )
            return
        high_watermark = self._commit_target
        stepping = _running_loop()
        budget = READ_ENTRIES if stepping is None else RECORDS_PER_STEP
        replayed = 0
        while self.applied_offset < high_watermark:
            # No more than is committed: when the high watermark creeps (a few
            # entries per Raft fetch), reading a step's worth decoded hundreds
            # of entries to keep a few.
            limit = None if stepping is None else budget - replayed
            wanted = min(budget if limit is None else limit, high_watermark - self.applied_offset)
            entries = self._log.read(self.applied_offset, wanted)
            if not entries:
                break
            delta, count = self._replay_entries(entries, high_watermark, limit)
            replayed += count
            if stepping is not None and delta.record_count > RECORDS_PER_STEP:
                # A whole transaction was replayed in this step: the publishers
                # (the broker working out its thousand new partitions) hear of
                # it in a callback of their own.
                self._unpublished = delta
                self._next_step = stepping.call_soon(self._publish_and_go_on)
                return
            if delta.record_count:
                self._publish(delta)
            if stepping is not None and replayed >= budget:
                if self.applied_offset < high_watermark:
                    self._next_step = stepping.call_soon(self._replay)
                break
        self._step_done()

    def _publish(self, delta: MetadataDelta) -> None:
        for publisher in self._publishers:
            publisher.on_delta(delta)

    def _publish_and_go_on(self) -> None:
        """The second half of the step that ended a long transaction: the image
        holds it already (a reader in between sees it whole), the publishers
        learn of it now (unless a snapshot loaded meanwhile told them all);
        the replay goes on in the next callback."""
        self._next_step = None
        delta, self._unpublished = self._unpublished, None
        if delta is not None:
            self._publish(delta)
        loop = _running_loop()
        if loop is not None and self.applied_offset < self._commit_target:
            self._next_step = loop.call_soon(self._replay)
        self._step_done()

    def _step_done(self) -> None:
        loop = _running_loop()
        if self._next_step is not None and loop is not None:
            self._collector.hold(loop, STEPS_WITHOUT_COLLECTOR_S)
        else:
            self._collector.release()
        self._wake_waiters()
        if self._next_step is None and not self.loaded.is_set():
            self.loaded.set()
        self._maybe_snapshot()

    def _replay_entries(
        self, entries: list[Entry], high_watermark: int, limit: int | None
    ) -> tuple[MetadataDelta, int]:
        """Replay ``entries`` below ``high_watermark`` into the image, stopping
        after ``limit`` records (None: all); the delta and how many it replayed."""
        delta = MetadataDelta(self.image)
        replayed = 0
        for entry in entries:
            if entry.offset >= high_watermark:
                break
            payload = entry.payload
            if isinstance(payload, bytes) and payload:
                self._apply(delta, decode_metadata_record(payload), entry.offset, entry.epoch)
                self._bytes_since_snapshot += len(payload)
                replayed += 1
            self.applied_offset = entry.offset + 1
            self.applied_epoch = entry.epoch
            if limit is not None and replayed >= limit:
                break
        return delta, replayed

    def _apply(self, delta: MetadataDelta, record: MetadataRecord, offset: int, epoch: int) -> None:
        """Replay one record, or hold it while its transaction is open (KIP-868): a
        controller write spans several records and must be seen whole or not at all,
        also when a failover cut it short (the next controller aborts it)."""
        name = record.name
        if name == "BeginTransactionRecord":
            if self._transaction is not None:
                log.warning("metadata: transaction at %d begins inside another", offset)
            self._transaction = []
        elif name == "EndTransactionRecord":
            for held, held_offset, held_epoch in self._transaction or ():
                delta.replay(held, held_offset, held_epoch)
            self._transaction = None
        elif name == "AbortTransactionRecord":
            if self._transaction:
                log.warning(
                    "metadata: dropping %d records of an aborted transaction (%s)",
                    len(self._transaction),
                    record.body.get("reason"),
                )
            self._transaction = None
        elif self._transaction is not None:
            self._transaction.append((record, offset, epoch))
        else:
            delta.replay(record, offset, epoch)

    @property
    def has_open_transaction(self) -> bool:
        return self._transaction is not None

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        started = time.monotonic()  # a step still to come reads on from the snapshot
        entries, _ = decode_entries(snapshot.data)
        records = [
            decode_metadata_record(entry.payload)
            for entry in entries
            if isinstance(entry.payload, bytes) and entry.payload
        ]
        count = len(records)
        self._transaction = None  # a snapshot never holds part of a write
        self._unpublished = None  # the reload below tells the publishers all
        # Rebuilt in place, so every holder of the image keeps a valid reference.
        self.image.load_snapshot(records, snapshot.snapshot_id.offset, snapshot.snapshot_id.epoch)
        self.applied_offset = snapshot.snapshot_id.offset
        self.applied_epoch = snapshot.snapshot_id.epoch
        self._bytes_since_snapshot = 0
        log.info(
            "metadata: loaded snapshot %d-%d (%d records) in %.0f ms",
            snapshot.snapshot_id.offset,
            snapshot.snapshot_id.epoch,
            count,
            (time.monotonic() - started) * 1000,
        )
        for publisher in self._publishers:
            publisher.on_image(self.image)
        self._wake_waiters()

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        for publisher in self._publishers:
            on_leader = getattr(publisher, "on_leader_change", None)
            if on_leader is not None:
                on_leader(leader_id, epoch)

    # -- waiting for one's own writes ----------------------------------------------

    async def wait_applied(self, offset: int) -> None:
        """Resolve once the entry at ``offset`` is in the image."""
        if self.applied_offset > offset:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((offset, future))
        await future

    def _wake_waiters(self) -> None:
        if not self._waiters:
            return
        still = []
        for offset, future in self._waiters:
            if self.applied_offset > offset:
                if not future.done():
                    future.set_result(None)
            elif not future.done():
                still.append((offset, future))
        self._waiters = still

    # -- writing snapshots ------------------------------------------------------------

    def _maybe_snapshot(self) -> None:
        if (
            self._create_snapshot is None
            or self.applied_offset <= self._log.start_offset
            or self._transaction is not None  # a snapshot holds whole writes only
        ):
            return
        now_ms = time.monotonic() * 1000
        due_by_size = self._bytes_since_snapshot >= self._snapshot_bytes
        due_by_time = (
            self._snapshot_interval_ms > 0
            and self._bytes_since_snapshot > 0
            and now_ms - self._last_snapshot_ms >= self._snapshot_interval_ms
        )
        if due_by_size or due_by_time:
            self.write_snapshot()

    def stop_stepping(self) -> None:
        """No further replay step (the node stops), and the collector back on: a
        pause left held past its loop would keep it off for the whole process."""
        if self._next_step is not None:
            self._next_step.cancel()
            self._next_step = None
        self._collector.release()

    def snapshot_at_stop(self) -> None:
        """Write a snapshot if the next start would replay a long tail (see
        STOP_SNAPSHOT_BYTES); called once Raft stopped committing.

        What was committed but not yet replayed goes into the image first, all
        at once and unpublished (the broker is stopping; nothing acts on it):
        a clean stop is mostly that tail, since the controller commits this
        broker's controlled shutdown -- a leadership or ISR change for every
        partition it hosts, 11,000 records at 11,000 partitions -- moments
        before it grants the stop, and the steps replaying it were still
        running.  Left out, every restart replayed them (1.3 s).  The snapshot
        stays at a committed offset: nothing past Raft's high watermark is
        read, so no truncation can take it back."""
        self.stop_stepping()
        self._replay_unpublished()
        if (
            self._bytes_since_snapshot >= STOP_SNAPSHOT_BYTES
            and self._transaction is None
            and self.applied_offset > self._log.start_offset
        ):
            self.write_snapshot()

    def _replay_unpublished(self) -> None:
        target = self._commit_target
        while self._log.start_offset <= self.applied_offset < target:
            entries = self._log.read(self.applied_offset, READ_ENTRIES)
            if not entries:
                break
            self._replay_entries(entries, target, None)

    def write_snapshot(self) -> None:
        """Write the image as a snapshot at the applied offset."""
        if self._create_snapshot is None or self.applied_offset == 0:
            return
        started = time.monotonic()
        payloads: list[bytes] = [
            encode_metadata_record(record) for record in snapshot_records(self.image)
        ]
        data = bytes(
            encode_payloads(
                list(payloads),
                base_offset=0,
                epoch=max(self.applied_epoch, 0),
                timestamp_ms=time.time_ns() // 1_000_000,
            )
        )
        self._create_snapshot(self.applied_offset, data)
        self._bytes_since_snapshot = 0
        self._last_snapshot_ms = time.monotonic() * 1000
        log.info(
            "metadata: wrote a snapshot at offset %d (%d records, %d bytes) in %.0f ms",
            self.applied_offset,
            len(payloads),
            len(data),
            (time.monotonic() - started) * 1000,
        )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop to step on; None (replay all at once) outside one, as in the
    deterministic simulator and in synchronous tests."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
