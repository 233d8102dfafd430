"""Transactions in the cluster simulator: producers, a coordinator, markers, crashes.

Transactional producers write to the ``data`` partitions through the real
``Partition`` (its producer state tracks each open transaction, the last
stable offset follows it, followers replicate the batches and markers through
the real fetchers), and a transaction coordinator drives two-phase commit as
Samsa's does: AddPartitions, EndTxn writing PrepareCommit/PrepareAbort, then
COMMIT/ABORT markers through each partition leader's ``append_marker``
(retried until every leader has it replicated), then Complete.  InitProducerId
bumps the epoch and aborts an instance's open transaction first; transactions
open past their timeout are aborted with a bumped epoch, so a late write of
the old instance is refused by the partitions.

Modelled, not run: the coordinator's state is a durable map (the replicated
``__transaction_state`` is the real coordinator's business and has its own
tests); the coordinator's network is a delay.  Faults: producers crash
(a new instance starts and fences the old), the coordinator crashes and comes
back with a higher coordinator epoch, resuming the markers of prepared
transactions; the brokers suffer every fault the simulator already injects.

Checks, on top of checks.py:

* a read_committed consumer never sees a batch of a transaction that is not
  decided COMMIT (aborted data, or data of an undecided transaction), and
  nothing past the last stable offset;
* the last stable offset a consumer sees never goes backwards within one
  leader epoch;
* once the cluster converges (the coordinator has completed or aborted every
  transaction), each partition's last stable offset is its high watermark and
  a read_committed scan of the leader's log shows every acknowledged batch of
  every committed transaction and no batch of an aborted one: no committed
  transaction is partly visible.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.cluster_sim.checks import DATA_TOPIC
from tests.cluster_sim.memory_log import MemoryLog

from samsa.errors import ErrorCode
from samsa.protocol.batches.record_batch import BatchHeader, iter_batches
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.replication.partition import Partition
from samsa.storage.producers.transaction_replay import parse_marker

if TYPE_CHECKING:
    from tests.cluster_sim.sim import ClusterSimulation

__all__ = ["TransactionWorkload"]

Body = dict[str, Any]
TxnKey = tuple[str, int, int, int]
"""(transactional id, producer id, producer epoch, transaction number)."""

PRODUCERS = 2
TXN_TIMEOUT_MS = 1000
ABORT_CHECK_MS = 50
COORDINATOR_DELAY_MS = (1, 8)
PRODUCE_ATTEMPTS = 4
ABORT_MARKER = 0
_RETRIABLE = (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.CONCURRENT_TRANSACTIONS)


@dataclass
class _Entry:
    """One transactional id in the coordinator's durable state."""

    producer_id: int
    epoch: int = -1
    state: str = "Empty"  # Ongoing, PrepareCommit, PrepareAbort, Complete
    partitions: set[int] = field(default_factory=set)
    started_ms: int = 0
    txn: TxnKey | None = None


class Coordinator:
    """The transaction coordinator of every transactional id, crashing and restarting."""

    def __init__(self, workload: TransactionWorkload) -> None:
        self.w = workload
        self.sim = workload.sim
        self.durable: dict[str, _Entry] = {}
        self.up = True
        self.incarnation = 0
        self.coordinator_epoch = 0
        self.crashes = 0

    def call(self, op: str, *args: Any, done: Any) -> None:
        """A request from a producer: answered after a delay, or COORDINATOR_NOT_AVAILABLE."""
        delay = self.w.rng.randint(*COORDINATOR_DELAY_MS)

        def serve() -> None:
            answer = getattr(self, op)(*args) if self.up else ErrorCode.COORDINATOR_NOT_AVAILABLE
            self.sim.at(self.sim.now + delay, done, answer)

        self.sim.at(self.sim.now + delay, serve)

    # -- requests ---------------------------------------------------------------------

    def init(self, tid: str, producer_id: int) -> ErrorCode | tuple[int, int]:
        entry = self.durable.setdefault(tid, _Entry(producer_id))
        if entry.state.startswith("Prepare"):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if entry.state == "Ongoing":
            self._prepare(tid, commit=False, bump=True)
            return ErrorCode.CONCURRENT_TRANSACTIONS
        entry.epoch += 1
        entry.state = "Empty"
        return entry.producer_id, entry.epoch

    def add(self, tid: str, epoch: int, partitions: set[int], txn: TxnKey) -> ErrorCode:
        entry = self.durable.get(tid)
        if entry is None or entry.epoch != epoch:
            return ErrorCode.PRODUCER_FENCED
        if entry.state.startswith("Prepare"):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if entry.state != "Ongoing":
            entry.state, entry.started_ms, entry.partitions = "Ongoing", self.sim.now, set()
        entry.partitions |= partitions
        entry.txn = txn
        return ErrorCode.NONE

    def end(self, tid: str, epoch: int, commit: bool, txn: TxnKey) -> ErrorCode:
        entry = self.durable.get(tid)
        if entry is None or entry.epoch != epoch:
            return ErrorCode.PRODUCER_FENCED
        if entry.txn == txn and self.w.decided.get(txn) is commit:
            return ErrorCode.NONE  # a retry of an EndTxn whose answer was lost
        if entry.state != "Ongoing":
            return ErrorCode.INVALID_TXN_STATE
        self._prepare(tid, commit=commit, bump=False)
        return ErrorCode.NONE

    # -- two-phase commit -------------------------------------------------------------

    def _prepare(self, tid: str, *, commit: bool, bump: bool) -> None:
        """The durable decision (the checker learns it here), then the markers."""
        entry = self.durable[tid]
        if bump:
            entry.epoch += 1  # the old instance's late writes are refused
        entry.state = "PrepareCommit" if commit else "PrepareAbort"
        if entry.txn is not None:
            self.w.decided[entry.txn] = commit
        self._send_markers(tid)

    def _send_markers(self, tid: str) -> None:
        entry = self.durable[tid]
        pending = set(entry.partitions)
        commit = entry.state == "PrepareCommit"
        incarnation = self.incarnation
        if not pending:
            entry.state = "Complete"
            return

        def attempt(index: int) -> None:
            if not self.up or self.incarnation != incarnation:
                return
            leader = self.w.leader_of(index)
            if leader is None:
                self.sim.at(self.sim.now + 20, attempt, index)
                return
            body = {
                "topic": DATA_TOPIC,
                "partition": index,
                "producer_id": entry.producer_id,
                "producer_epoch": entry.epoch,
                "coordinator_epoch": self.coordinator_epoch,
                "commit": commit,
            }
            self.sim.broker_call(0, leader, "marker", body, lambda r: done(index, r))

        def done(index: int, response: Body | None) -> None:
            if not self.up or self.incarnation != incarnation:
                return
            if response is None or response["error_code"] != ErrorCode.NONE:
                self.w.marker_retries += 1
                self.sim.at(self.sim.now + 20, attempt, index)
                return
            pending.discard(index)
            if not pending:
                entry.state = "Complete"
                self.w.completed += 1

        for index in sorted(pending):
            attempt(index)

    def abort_timed_out(self) -> None:
        self.sim.at(self.sim.now + ABORT_CHECK_MS, self.abort_timed_out)
        if not self.up:
            return
        for tid, entry in sorted(self.durable.items()):
            if entry.state == "Ongoing" and self.sim.now - entry.started_ms > TXN_TIMEOUT_MS:
                self.w.timed_out += 1
                self._prepare(tid, commit=False, bump=True)

    # -- faults -----------------------------------------------------------------------

    def maybe_crash(self) -> None:
        self.sim.at(self.sim.now + self.w.rng.randint(100, 400), self.maybe_crash)
        if not self.sim.faults_active or not self.up or self.w.rng.random() > 0.15:
            return
        self.up = False
        self.crashes += 1
        self.sim.at(self.sim.now + self.w.rng.randint(20, 200), self._restart)

    def _restart(self) -> None:
        """A new coordinator loads the durable state, as on a leadership change."""
        self.up = True
        self.incarnation += 1
        self.coordinator_epoch += 1
        for tid, entry in sorted(self.durable.items()):
            if entry.state.startswith("Prepare"):
                self._send_markers(tid)

    def settled(self) -> bool:
        return self.up and all(e.state in ("Empty", "Complete") for e in self.durable.values())


class TxnProducer:
    """One transactional id: instances that init, write, commit or abort, and crash."""

    def __init__(self, workload: TransactionWorkload, number: int) -> None:
        self.w = workload
        self.sim = workload.sim
        self.tid = f"txn-{number}"
        self.producer_id = 5000 + number
        self.instance = 0
        self.epoch = -1
        self.sequences: dict[int, int] = {}
        self.txn_number = 0

    def _current(self, instance: int) -> bool:
        return instance == self.instance

    def start(self) -> None:
        """A new instance: InitProducerId until it has an epoch."""
        self.instance += 1
        instance = self.instance

        def done(answer: ErrorCode | tuple[int, int]) -> None:
            if not self._current(instance):
                return
            if isinstance(answer, ErrorCode):
                self.sim.at(self.sim.now + 20, retry)
                return
            self.producer_id, self.epoch = answer
            self.sequences = {}
            self._next(instance)

        def retry() -> None:
            if self._current(instance):
                self.w.coordinator.call("init", self.tid, self.producer_id, done=done)

        retry()

    def _crash(self) -> None:
        """The instance dies; another starts later (and fences it)."""
        self.w.producer_crashes += 1
        self.instance += 1
        self.sim.at(self.sim.now + self.w.rng.randint(10, 600), self.start)

    def _next(self, instance: int) -> None:
        self.sim.at(self.sim.now + self.w.rng.randint(5, 40), self._begin, instance)

    def _begin(self, instance: int) -> None:
        if not self._current(instance) or not self.sim.faults_active:
            return
        indexes = self.w.data_partitions()
        if not indexes:
            self._next(instance)
            return
        chosen = set(self.w.rng.sample(indexes, self.w.rng.randint(1, min(2, len(indexes)))))
        self.txn_number += 1
        txn: TxnKey = (self.tid, self.producer_id, self.epoch, self.txn_number)
        epoch = self.epoch

        def added(code: ErrorCode) -> None:
            if not self._current(instance):
                return
            if code in _RETRIABLE:
                self.sim.at(self.sim.now + 20, add)
                return
            if code != ErrorCode.NONE:
                self.start()  # fenced or unavailable: a new init, as a client recovers
                return
            writes = [i for i in sorted(chosen) for _ in range(self.w.rng.randint(1, 2))]
            self._write(instance, txn, epoch, writes)

        def add() -> None:
            if self._current(instance):
                self.w.coordinator.call("add", self.tid, epoch, chosen, txn, done=added)

        add()

    def _write(self, instance: int, txn: TxnKey, epoch: int, writes: list[int]) -> None:
        """The transaction's batches one by one (acks=all), then its end."""
        if not self._current(instance):
            return
        if self.w.rng.random() < 0.03:
            self._crash()
            return
        if not writes:
            self._end(instance, txn, epoch, commit=self.w.rng.random() < 0.7)
            return
        index = writes[0]
        sequence = self.sequences.get(index, 0)
        batch_id = self.sim.next_batch_id
        self.sim.next_batch_id += 1
        builder = RecordBatchBuilder(
            producer_id=self.producer_id,
            producer_epoch=epoch,
            base_sequence=sequence,
            is_transactional=True,
        )
        builder.append(batch_id, None, b"t")
        records = bytes(builder.build())
        self.w.batches[batch_id] = txn
        self._send(instance, txn, epoch, writes, records, batch_id, sequence, 1)

    def _send(
        self,
        instance: int,
        txn: TxnKey,
        epoch: int,
        writes: list[int],
        records: bytes,
        batch_id: int,
        sequence: int,
        attempt: int,
    ) -> None:
        index = writes[0]
        leader = self.w.leader_of(index)

        def done(response: Body | None) -> None:
            if not self._current(instance):
                return
            code = ErrorCode.REQUEST_TIMED_OUT if response is None else response["error_code"]
            if code == ErrorCode.NONE:
                assert response is not None
                self.sequences[index] = sequence + 1
                self.w.acked.setdefault(txn, []).append(batch_id)
                self._write(instance, txn, epoch, writes[1:])
            elif code in (ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH):
                self.start()
            elif attempt < PRODUCE_ATTEMPTS:
                self.sim.at(
                    self.sim.now + 30,
                    self._send,
                    instance,
                    txn,
                    epoch,
                    writes,
                    records,
                    batch_id,
                    sequence,
                    attempt + 1,
                )
            else:
                # The batch's fate is unknown: abort (a bumped epoch fences it if late).
                self.start()

        if leader is None:
            done(None)
            return
        body = {"topic": DATA_TOPIC, "partition": index, "records": records}
        self.sim.broker_call(0, leader, "produce", body, done, self.sim.cluster.produce_timeout_ms)

    def _end(self, instance: int, txn: TxnKey, epoch: int, *, commit: bool) -> None:
        def done(code: ErrorCode) -> None:
            if not self._current(instance):
                return
            if code == ErrorCode.NONE:
                self.w.ended[commit] += 1
                self._next(instance)
            elif code in _RETRIABLE:
                self.sim.at(self.sim.now + 20, end)
            else:
                self.start()

        def end() -> None:
            if self._current(instance):
                self.w.coordinator.call("end", self.tid, epoch, commit, txn, done=done)

        end()


class TransactionWorkload:
    """The producers, the coordinator, a read_committed consumer and the checks."""

    def __init__(self, sim: ClusterSimulation) -> None:
        self.sim = sim
        self.rng = random.Random(sim.cluster.seed * 7919 + 3)
        self.coordinator = Coordinator(self)
        self.producers = [TxnProducer(self, n) for n in range(PRODUCERS)]
        self.batches: dict[int, TxnKey] = {}
        self.acked: dict[TxnKey, list[int]] = {}
        self.decided: dict[TxnKey, bool] = {}
        self.ended = {True: 0, False: 0}
        self.completed = 0
        self.timed_out = 0
        self.marker_retries = 0
        self.producer_crashes = 0
        self.read_committed_batches = 0
        self.positions: dict[int, int] = {}
        self.inflight: set[int] = set()
        self.lso_seen: dict[int, tuple[int, int]] = {}
        self.lso_steps_back = 0

    def start(self) -> None:
        for producer in self.producers:
            self.sim.at(self.sim.now + 50, producer.start)
        self.sim.at(self.sim.now + ABORT_CHECK_MS, self.coordinator.abort_timed_out)
        self.sim.at(self.sim.now + 200, self.coordinator.maybe_crash)
        self.sim.at(self.sim.now + 30, self._consume)

    # -- what the clients see ---------------------------------------------------------

    def data_partitions(self) -> list[int]:
        image = self.sim._metadata_view()
        topic = None if image is None else image.topics.get(DATA_TOPIC)
        return [] if topic is None else sorted(topic.partitions)

    def leader_of(self, index: int) -> int | None:
        image = self.sim._metadata_view()
        topic = None if image is None else image.topics.get(DATA_TOPIC)
        registration = None if topic is None else topic.partitions.get(index)
        if registration is None or registration.leader < 0:
            return None
        return int(registration.leader)

    def _consume(self) -> None:
        if not self.sim.faults_active:
            return
        self.sim.at(self.sim.now + self.rng.randint(10, 40), self._consume)
        indexes = self.data_partitions()
        if not indexes:
            return
        index = self.rng.choice(indexes)
        leader = self.leader_of(index)
        if leader is None or index in self.inflight:
            return
        self.inflight.add(index)
        body = {
            "topic": DATA_TOPIC,
            "partition": index,
            "fetch_offset": self.positions.get(index, 0),
            "current_leader_epoch": -1,
            "read_committed": True,
        }

        def done(response: Body | None) -> None:
            self.inflight.discard(index)
            if response is None or response["entry"]["error_code"] != ErrorCode.NONE:
                return
            self._on_read(index, response["entry"], response["leader_epoch"])

        self.sim.broker_call(0, leader, "consume", body, done)

    def _on_read(self, index: int, entry: Body, leader_epoch: int) -> None:
        lso = entry["last_stable_offset"]
        last_epoch, last_lso = self.lso_seen.get(index, (-1, 0))
        if leader_epoch == last_epoch and lso < last_lso:
            self.sim.fail(
                f"read_committed consumer saw the LSO of data-{index} go from {last_lso} to "
                f"{lso} in leader epoch {leader_epoch}"
            )
        if lso < last_lso:
            self.lso_steps_back += 1
        self.lso_seen[index] = (
            leader_epoch,
            lso if leader_epoch != last_epoch else max(lso, last_lso),
        )
        position = self.positions.get(index, 0)
        visible, end = visible_batches(entry["records"], entry["aborted_transactions"] or [])
        for header in visible:
            if header.next_offset > lso:
                self.sim.fail(
                    f"read_committed consumer got data-{index}@{header.base_offset} past the "
                    f"last stable offset {lso}"
                )
            self._check_visible(index, header, "read_committed consumer")
            self.read_committed_batches += 1
        if end is not None and end > position:
            self.positions[index] = end

    def _check_visible(self, index: int, header: BatchHeader, who: str) -> None:
        txn = self.batches.get(header.base_timestamp)
        if not header.is_transactional or txn is None:
            return
        decision = self.decided.get(txn)
        if decision is not True:
            what = "aborted" if decision is False else "undecided"
            self.sim.fail(
                f"{who} sees batch {header.base_timestamp} of {what} transaction {txn} "
                f"at data-{index}@{header.base_offset}"
            )

    # -- convergence ------------------------------------------------------------------

    def settled(self) -> bool:
        return self.coordinator.settled()

    def check_converged(self, leaders: dict[int, Partition]) -> None:
        visible: set[int] = set()
        for index, partition in sorted(leaders.items()):
            if partition.last_stable_offset != partition.high_watermark:
                self.sim.fail(
                    f"data-{index}: LSO {partition.last_stable_offset} below the high "
                    f"watermark {partition.high_watermark} with every transaction complete"
                )
            log = partition.log
            assert isinstance(log, MemoryLog)
            data = b"".join(b.data for b in log.batches)
            aborted = [
                {"producer_id": t.producer_id, "first_offset": t.first_offset}
                for t in log.collect_aborted_txns(log.log_start_offset, partition.high_watermark)
            ]
            for header in visible_batches(data, aborted)[0]:
                self._check_visible(index, header, "a read_committed scan")
                visible.add(header.base_timestamp)
        for txn, batch_ids in sorted(self.acked.items()):
            if self.decided.get(txn) is True and not set(batch_ids) <= visible:
                self.sim.fail(f"committed transaction {txn} is partly visible")

    def summary(self) -> str:
        return (
            f"txns committed {self.ended[True]} aborted {self.ended[False]} "
            f"(timed out {self.timed_out}), decided {len(self.decided)}, "
            f"completed {self.completed}, producer crashes {self.producer_crashes}, "
            f"coordinator crashes {self.coordinator.crashes}, marker retries "
            f"{self.marker_retries}, read_committed batches {self.read_committed_batches}, "
            f"lso steps back {self.lso_steps_back}"
        )


def visible_batches(
    records: bytes | memoryview, aborted: list[Body]
) -> tuple[list[BatchHeader], int | None]:
    """What a read_committed consumer keeps of a fetch, as Kafka's consumer filters it:
    an aborted transaction (from the fetch's list) hides its producer's
    transactional batches from its first offset until that producer's ABORT
    marker.  Also returns the offset after the last batch (control ones too)."""
    pending = sorted(aborted, key=lambda t: t["first_offset"])
    active: set[int] = set()
    kept: list[BatchHeader] = []
    end: int | None = None
    buf = bytes(records)
    for pos, header in iter_batches(buf):
        end = header.next_offset
        while pending and pending[0]["first_offset"] <= header.next_offset - 1:
            active.add(pending.pop(0)["producer_id"])
        if header.is_control:
            marker, _ = parse_marker(buf, pos, header)
            if marker == ABORT_MARKER:
                active.discard(header.producer_id)
            continue
        if header.is_transactional and header.producer_id in active:
            continue
        kept.append(header)
    return kept, end
