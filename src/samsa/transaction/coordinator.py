"""The transaction coordinator: transactional ids, their producer epochs and two-phase commit.

Each transactional id belongs to one ``__transaction_state`` partition (Kafka's
placement, ``partitioning.partition_for``); the leader of that partition is
its coordinator and keeps its state in memory, rebuilt from the log when it
becomes leader (:meth:`load`).  Every change is written to the log before it
is kept or answered, so a new coordinator finds exactly what the old one
acknowledged: that state and its log are :mod:`state_manager`'s, the
decisions over them (one lock per id) this module's.

A commit or abort is Kafka's two phases: ``PrepareCommit``/``PrepareAbort`` is
written (after that the outcome is decided, whatever crashes), then a marker
goes to every partition of the transaction (:mod:`completion`), then
``CompleteCommit``/``CompleteAbort``.  A coordinator that loads a transaction in
a prepare state finishes it.  While markers are being written the id answers
CONCURRENT_TRANSACTIONS, which clients retry.

Fencing: InitProducerId bumps the epoch, so requests of an older instance get
PRODUCER_FENCED; its open transaction is aborted first (at a bumped epoch, so
its late writes are refused by the partitions too).  Transactions open past
their timeout are aborted the same way (:meth:`abort_timed_out`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable

from samsa.errors import ErrorCode, KafkaError
from samsa.transaction.completion import MarkerCompletion
from samsa.transaction.config import TransactionConfig
from samsa.transaction.epoch_bump import completed, decide_end_txn_v2, epoch_exhausted
from samsa.transaction.metadata import MAX_EPOCH, TransactionMetadata, TxnState
from samsa.transaction.state_manager import TransactionStateManager
from samsa.transaction.store import MarkerWriter, ProducerIdSource, TransactionStore

log = logging.getLogger("samsa.transaction")

__all__ = ["TransactionCoordinator"]

TopicPartition = tuple[str, int]
S = TxnState


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class TransactionCoordinator:
    def __init__(
        self,
        store: TransactionStore,
        markers: MarkerWriter,
        allocate_producer_id: ProducerIdSource,
        config: TransactionConfig,
        *,
        time_ms: Callable[[], int] = _wall_clock_ms,
    ) -> None:
        self.config = config
        self.time_ms = time_ms
        self._allocate = allocate_producer_id
        self.state = TransactionStateManager(store, config.num_partitions)
        self._locks: dict[str, asyncio.Lock] = {}
        self.completion = MarkerCompletion(markers, self._complete, config.marker_retry_backoff_ms)

    # ------------------------------------------------------------ ownership (state_manager)
    def partition_for(self, transactional_id: str) -> int:
        return self.state.partition_for(transactional_id)

    def owns(self, partition: int) -> bool:
        return self.state.owns(partition)

    def is_loading(self, partition: int) -> bool:
        return self.state.is_loading(partition)

    def coordinator_error(self, transactional_id: str) -> ErrorCode | None:
        """NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS unless this coordinator serves the id."""
        return self.state.coordinator_error(transactional_id)

    async def load(self, partition: int, coordinator_epoch: int) -> None:
        """Rebuild the partition's transactional ids; finish transactions left prepared."""
        for meta in await self.state.load(partition, coordinator_epoch):
            self.completion.start(meta, self.state.coordinator_epoch(meta))

    def unload(self, partition: int) -> None:
        self.state.unload(partition)
        self.completion.cancel_partition(partition, self.partition_for)

    async def shutdown(self) -> None:
        await self.completion.cancel_all()
        await self.completion.markers.close()

    def transactions(self) -> list[TransactionMetadata]:
        return self.state.transactions()

    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self.state.get(transactional_id)

    # ------------------------------------------------------------ InitProducerId
    async def init_producer_id(
        self,
        transactional_id: str,
        timeout_ms: int,
        producer_id: int = -1,
        producer_epoch: int = -1,
    ) -> tuple[ErrorCode, int, int]:
        """(error, producer id, epoch) for a transactional producer starting or restarting."""
        error = self.coordinator_error(transactional_id)
        if error is not None:
            return error, -1, -1
        if timeout_ms <= 0 or timeout_ms > self.config.max_timeout_ms:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1
        # A transaction still being completed (its own, or the fenced instance's we
        # abort here) is waited for a while in the request, as EndTxn waits for its
        # markers; past that the client gets CONCURRENT_TRANSACTIONS and retries.
        for _ in range(2):
            try:
                async with self._lock(transactional_id):
                    result = await self._init_locked(
                        transactional_id, timeout_ms, producer_id, producer_epoch
                    )
            except KafkaError as exc:  # no producer id block, or the log refused
                log.warning("InitProducerId for %r failed: %s", transactional_id, exc)
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, -1
            if result is not None:
                return result
            await self.completion.wait(transactional_id, self.config.end_txn_wait_ms / 1000)
        return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1

    async def _init_locked(
        self, transactional_id: str, timeout_ms: int, producer_id: int, producer_epoch: int
    ) -> tuple[ErrorCode, int, int] | None:
        """The answer, or None while a transaction of the id is being completed."""
        meta = self.state.get(transactional_id)
        if meta is None:
            pid = await self._allocate()
            meta = TransactionMetadata(transactional_id, pid, -1, timeout_ms, S.EMPTY)
        elif meta.state.is_prepare or self.completion.busy(transactional_id):
            return None
        elif producer_id >= 0 and (producer_id, producer_epoch) != (
            meta.producer_id,
            meta.producer_epoch,
        ):
            return ErrorCode.PRODUCER_FENCED, -1, -1
        if meta.state is S.ONGOING:
            # A new instance fences the old one: its transaction is aborted at a
            # bumped epoch, so the old instance's late writes are refused too.
            prepared = (await self._bump_epoch(meta)).but(
                state=S.PREPARE_ABORT, last_update_ms=self.time_ms()
            )
            await self._persist(prepared)
            self.completion.start(prepared, self.state.coordinator_epoch(meta))
            return None
        bumped = await self._bump_epoch(meta)
        ready = bumped.but(
            state=S.EMPTY,
            timeout_ms=timeout_ms,
            partitions=frozenset(),
            start_ms=-1,
            last_update_ms=self.time_ms(),
        )
        await self._persist(ready)
        return ErrorCode.NONE, ready.producer_id, ready.producer_epoch

    async def _bump_epoch(self, meta: TransactionMetadata) -> TransactionMetadata:
        if meta.producer_epoch >= MAX_EPOCH - 1:
            pid = await self._allocate()
            return meta.but(
                previous_producer_id=meta.producer_id, producer_id=pid, producer_epoch=0
            )
        return meta.but(producer_epoch=meta.producer_epoch + 1)

    # ------------------------------------------------------------ AddPartitions / AddOffsets
    async def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> ErrorCode:
        """Record partitions the producer will write to in its open transaction."""
        error = self.coordinator_error(transactional_id)
        if error is not None:
            return error
        async with self._lock(transactional_id):
            meta = self.state.get(transactional_id)
            error = self._check_producer(meta, producer_id, producer_epoch)
            if error is not None:
                return error
            assert meta is not None
            if meta.state.is_prepare or self.completion.busy(transactional_id):
                return ErrorCode.CONCURRENT_TRANSACTIONS
            wanted = frozenset(partitions)
            if meta.state is S.ONGOING and wanted <= meta.partitions:
                return ErrorCode.NONE
            now = self.time_ms()
            start = meta.start_ms if meta.state is S.ONGOING else now
            return await self.state.write(
                meta.but(
                    state=S.ONGOING,
                    partitions=meta.partitions | wanted if meta.state is S.ONGOING else wanted,
                    start_ms=start,
                    last_update_ms=now,
                )
            )

    def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """KIP-890 verification for a partition leader (AddPartitionsToTxn v4
        ``verify_only``): is each partition in the producer's open transaction?"""
        wanted = list(partitions)
        meta = self.state.get(transactional_id)
        code = self.coordinator_error(transactional_id) or self._check_producer(
            meta, producer_id, producer_epoch
        )
        if code is None and meta is not None and meta.state.is_prepare:
            code = ErrorCode.CONCURRENT_TRANSACTIONS
        if code is not None or meta is None:
            return dict.fromkeys(wanted, code or ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        ongoing = meta.state is S.ONGOING
        return {
            tp: ErrorCode.NONE if ongoing and tp in meta.partitions else ErrorCode.INVALID_TXN_STATE
            for tp in wanted
        }

    # ------------------------------------------------------------ EndTxn
    async def end_txn(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> ErrorCode:
        error = self.coordinator_error(transactional_id)
        if error is not None:
            return error
        async with self._lock(transactional_id):
            error = await self._end_txn(transactional_id, producer_id, producer_epoch, commit)
        if error is ErrorCode.NONE:
            await self.completion.wait(transactional_id, self.config.end_txn_wait_ms / 1000)
        return error

    async def end_txn_v2(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> tuple[ErrorCode, int, int]:
        """EndTxn v5 (transaction version 2): (error, producer id, epoch to continue with)."""
        error = self.coordinator_error(transactional_id)
        if error is not None:
            return error, -1, -1
        async with self._lock(transactional_id):
            meta = self.state.get(transactional_id)
            if meta is not None and self.completion.busy(transactional_id):
                return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
            next_pid = -1
            if meta is not None and not meta.state.is_prepare and epoch_exhausted(meta):
                try:
                    next_pid = await self._allocate()
                except KafkaError as exc:
                    log.warning("EndTxn for %r found no producer id: %s", transactional_id, exc)
                    return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, -1
            decision = decide_end_txn_v2(
                meta, producer_id, producer_epoch, commit, self.time_ms(), next_pid
            )
            if decision.prepared is None:
                return decision.error, decision.producer_id, decision.producer_epoch
            assert meta is not None
            error = await self.state.write(decision.prepared)
            if error is not ErrorCode.NONE:
                return error, -1, -1
            # Decided: the markers follow even if this coordinator dies now.
            self.completion.start(decision.prepared, self.state.coordinator_epoch(meta))
        await self.completion.wait(transactional_id, self.config.end_txn_wait_ms / 1000)
        return ErrorCode.NONE, decision.producer_id, decision.producer_epoch

    async def _end_txn(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> ErrorCode:
        meta = self.state.get(transactional_id)
        error = self._check_producer(meta, producer_id, producer_epoch)
        if error is not None:
            return error
        assert meta is not None
        state = meta.state
        if state is S.ONGOING:
            prepared = meta.but(
                state=S.PREPARE_COMMIT if commit else S.PREPARE_ABORT,
                last_update_ms=self.time_ms(),
            )
            error = await self.state.write(prepared)
            if error is ErrorCode.NONE:
                # Decided: the markers follow even if this coordinator dies now.
                self.completion.start(prepared, self.state.coordinator_epoch(meta))
            return error
        if state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            done_commit = state is S.COMPLETE_COMMIT
            return ErrorCode.NONE if done_commit == commit else ErrorCode.INVALID_TXN_STATE
        if state.is_prepare:
            same = (state is S.PREPARE_COMMIT) == commit
            return ErrorCode.CONCURRENT_TRANSACTIONS if same else ErrorCode.INVALID_TXN_STATE
        return ErrorCode.INVALID_TXN_STATE

    def _check_producer(
        self, meta: TransactionMetadata | None, producer_id: int, producer_epoch: int
    ) -> ErrorCode | None:
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        return None

    # ------------------------------------------------------------ timeouts
    async def abort_timed_out(self, now_ms: int | None = None) -> int:
        """Abort (fencing the producer with a bumped epoch) transactions open past their timeout."""
        now = self.time_ms() if now_ms is None else now_ms
        aborted = 0
        for meta in self.state.timed_out(now):
            async with self._lock(meta.transactional_id):
                current = self.state.get(meta.transactional_id)
                if current is None or current.state is not S.ONGOING:
                    continue
                log.info(
                    "aborting transaction of %r (producer %d): open longer than %d ms",
                    current.transactional_id,
                    current.producer_id,
                    current.timeout_ms,
                )
                bumped = await self._bump_epoch(current)
                prepared = bumped.but(state=S.PREPARE_ABORT, last_update_ms=now)
                if await self.state.write(prepared) is ErrorCode.NONE:
                    self.completion.start(prepared, self.state.coordinator_epoch(current))
                    aborted += 1
        return aborted

    async def expire_transactional_ids(self, now_ms: int | None = None) -> int:
        """Forget ids idle for ``transactional.id.expiration.ms`` with no transaction
        in progress: a tombstone goes to the log, so compaction drops them too."""
        now = self.time_ms() if now_ms is None else now_ms
        idle = [
            m
            for m in self.state.idle(now, self.config.id_expiration_ms)
            if not self.completion.busy(m.transactional_id)
        ]
        expired = 0
        for meta in idle:
            async with self._lock(meta.transactional_id):
                if self.state.get(meta.transactional_id) is not meta:
                    continue  # used meanwhile
                if not await self.state.forget(meta):
                    continue
                self._locks.pop(meta.transactional_id, None)
                expired += 1
        return expired

    # ------------------------------------------------------------ persistence
    async def _complete(self, meta: TransactionMetadata) -> None:
        """After the markers: CompleteCommit/CompleteAbort (called by the completion)."""
        async with self._lock(meta.transactional_id):
            current = self.state.get(meta.transactional_id)
            if current is None or not current.state.is_prepare:
                return
            await self.state.write(completed(current, self.time_ms()))

    async def _persist(self, meta: TransactionMetadata) -> None:
        code = await self.state.write(meta)
        if code is not ErrorCode.NONE:
            raise KafkaError(code, f"could not write the state of {meta.transactional_id!r}")

    def _lock(self, transactional_id: str) -> asyncio.Lock:
        lock = self._locks.get(transactional_id)
        if lock is None:
            lock = self._locks[transactional_id] = asyncio.Lock()
        return lock
