"""Moving hosted replicas between two log dirs: the decision, the copy, the API's answers.

The decision (promotion) is a pure function; the copier runs on real logs;
the moves run in a real ReplicaManager over two real dirs, with appends going
on while they copy.  The controller's part is a stand-in that answers as the
controller does (it is tested against the controller elsewhere, and the whole
path against a broker in tests/kafka_tools/test_reassign_log_dirs.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest
from tests.replication.helpers import ManualClock, make_batch

from samsa.errors import ErrorCode
from samsa.protocol.batches.record_batch import iter_batches
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.replication import ReplicaManager
from samsa.replication.dir_moves.copier import copy_pass, facts
from samsa.replication.dir_moves.promotion import (
    LogFacts,
    Move,
    ReassignmentState,
    Step,
    next_step,
)
from samsa.replication.partition import Partition
from samsa.storage.leader_epoch_cache import EpochEntry
from samsa.storage.log import Log
from samsa.storage.log_dirs import LogDirs
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.segments.transaction_index import AbortedTxn
from samsa.storage.topic_config.log_config import LogConfig

T = TypeVar("T")
CONFIG = LogConfig.from_dict({"segment.bytes": "4000"})


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 30))


def log_bytes(log: Log) -> bytes:
    out = bytearray()
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        records = log.read(offset, 1 << 30).records
        chunk = records if isinstance(records, bytes) else records.read_bytes()
        out += chunk
        offset = [h for _, h in iter_batches(memoryview(chunk))][-1].next_offset
    return bytes(out)


# ---------------------------------------------------------------------- the decision
BEHIND = LogFacts(0, 5, ())
LEVEL = LogFacts(0, 10, ())


@pytest.mark.parametrize(
    ("state", "future", "assigns", "step"),
    [
        (ReassignmentState.NONE, BEHIND, True, Step.COPY),
        (ReassignmentState.NONE, LEVEL, True, Step.ASSIGN),
        (ReassignmentState.QUEUED, BEHIND, True, Step.COPY),
        (ReassignmentState.QUEUED, LEVEL, True, Step.WAIT),
        (ReassignmentState.ACCEPTED, BEHIND, True, Step.COPY),
        (ReassignmentState.ACCEPTED, LEVEL, True, Step.SWAP),
        (ReassignmentState.NONE, BEHIND, False, Step.COPY),
        (ReassignmentState.NONE, LEVEL, False, Step.SWAP),
    ],
)
def test_the_next_step(
    state: ReassignmentState, future: LogFacts, assigns: bool, step: Step
) -> None:
    move = Move("t", 0, "/b", "/a", state=state)
    assert next_step(move, LEVEL, future, assigns=assigns) is step


def test_caught_up_means_the_same_start_end_and_epochs() -> None:
    move = Move("t", 0, "/b", "/a", state=ReassignmentState.ACCEPTED)
    current = LogFacts(3, 10, (EpochEntry(0, 0), EpochEntry(2, 10)))
    assert next_step(move, current, LogFacts(0, 10, current.epochs), assigns=True) is Step.COPY
    assert next_step(move, current, LogFacts(3, 10, current.epochs[:1]), assigns=True) is Step.COPY
    assert next_step(move, current, current, assigns=True) is Step.SWAP
    assert ReassignmentState.QUEUED.maybe_inconsistent_metadata
    assert not ReassignmentState.EFFECTIVE.maybe_inconsistent_metadata
    with pytest.raises(ValueError):
        next_step(
            Move("t", 0, "/b", "/a", state=ReassignmentState.EFFECTIVE),
            current,
            current,
            assigns=True,
        )


# ---------------------------------------------------------------------- the copier
def _logs(tmp_path: Path) -> tuple[Log, Log, ProducerStateManager]:
    clock = ManualClock()
    source = Log.open(tmp_path / "a" / "t-0", "t", 0, CONFIG, clock=clock)
    future = Log.open(tmp_path / "b" / "t-0.f-future", "t", 0, CONFIG, clock=clock)
    return source, future, ProducerStateManager(future.directory)


def _leader_batch(epoch: int, count: int = 3) -> bytearray:
    return make_batch(count)


def _txn_batch(producer_id: int, sequence: int) -> bytearray:
    builder = RecordBatchBuilder(
        producer_id=producer_id, producer_epoch=0, base_sequence=sequence, is_transactional=True
    )
    for i in range(2):
        builder.append(1_000 + i, b"k", b"v%d" % i)
    return bytearray(builder.build())


def test_a_copy_is_the_same_log_byte_for_byte_with_its_aborted_transactions(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    from tests.replication.helpers import make_partition

    partition = make_partition(tmp_path, clock, **{"segment_bytes": 3000})
    for i in range(20):
        partition.append_from_client(memoryview(make_batch(4, tag=f"r{i}")))
    partition.append_from_client(memoryview(_txn_batch(7, 0)))
    partition.append_from_client(memoryview(_txn_batch(8, 0)))
    partition.append_marker(7, 0, 0, commit=False)
    partition.append_marker(8, 0, 0, commit=True)
    source = partition.log
    future = Log.open(tmp_path / "b" / "orders-0.f-future", "orders", 0, source.config, clock=clock)
    state = ProducerStateManager(future.directory)
    copied = 0
    while future.log_end_offset < source.log_end_offset:
        copied += copy_pass(source, future, state, 1000)  # several passes, segment by segment
    assert copied == source.size_bytes
    assert log_bytes(future) == log_bytes(source)
    assert facts(future) == facts(source)
    aborted = source.collect_aborted_txns(0, source.log_end_offset)
    assert aborted == [AbortedTxn(7, 80, 84, 82)]
    assert future.collect_aborted_txns(0, future.log_end_offset) == aborted
    assert set(state.active_producers()) == {7, 8}


def test_a_diverging_suffix_is_cut_and_copied_again(tmp_path: Path) -> None:
    source, future, state = _logs(tmp_path)
    for _ in range(3):
        source.maybe_assign_epoch_start_offset(1, source.log_end_offset)
        source.append(make_batch(3), leader_epoch=1)
    copy_pass(source, future, state, 1 << 20)
    assert facts(future) == facts(source)
    # The current log, a follower, truncates the last batch and takes the new
    # leader's (epoch 2) data at the same offsets.
    source.truncate_to(6)
    source.maybe_assign_epoch_start_offset(2, 6)
    source.append(make_batch(5), leader_epoch=2)
    copy_pass(source, future, state, 1 << 20)
    assert log_bytes(future) == log_bytes(source)
    assert facts(future) == facts(source)


def test_the_future_log_follows_the_current_logs_start(tmp_path: Path) -> None:
    source, future, state = _logs(tmp_path)
    for _ in range(30):
        source.append(make_batch(3))
    copy_pass(source, future, state, 2000)
    source.delete_records(45)  # DeleteRecords inside the part already copied
    copy_pass(source, future, state, 1 << 20)
    assert (future.log_start_offset, future.log_end_offset) == (45, 90)
    source.delete_records(90)
    source.append(make_batch(3))
    copy_pass(source, future, state, 1 << 20)
    assert facts(future) == facts(source)


def test_a_future_log_starting_after_the_current_one_starts_over(tmp_path: Path) -> None:
    source, future, state = _logs(tmp_path)
    for _ in range(4):
        source.append(make_batch(3))
    future.truncate_fully_and_start_at(6)  # as if a crash put the current start back
    copy_pass(source, future, state, 1 << 20)
    assert facts(future) == facts(source)
    assert log_bytes(future) == log_bytes(source)


def test_a_new_leaders_epoch_without_data_reaches_the_future_log(tmp_path: Path) -> None:
    source, future, state = _logs(tmp_path)
    source.maybe_assign_epoch_start_offset(0, 0)
    source.append(make_batch(3), leader_epoch=0)
    source.maybe_assign_epoch_start_offset(4, 3)  # elected, nothing written yet
    copy_pass(source, future, state, 1 << 20)
    assert future.leader_epoch_cache.entries() == [EpochEntry(0, 0), EpochEntry(4, 3)]


# ---------------------------------------------------------------------- the moves
class Broker:
    """A ReplicaManager over two real dirs, its partitions standalone (one node)."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.dirs = LogDirs.open([tmp_path / "a", tmp_path / "b"], CONFIG, clock=ManualClock())
        self.manager = ReplicaManager(self.dirs, ManualClock())
        self.manager.load_existing()
        self.moves = self.manager.dir_moves
        self.assigned: list[tuple[bytes, int, str]] = []

    def partition(self, topic: str, index: int, in_dir: str) -> Partition:
        existing = self.manager.get(topic, index)
        if existing is not None:
            return existing
        self.dirs.prefer_dir(topic, index, self.manager_of(in_dir))
        partition = self.manager.create(topic, index, {"segment.bytes": "4000"})
        partition.topic_id = bytes(16)
        return partition

    def manager_of(self, name: str):  # type: ignore[no-untyped-def]
        return self.dirs.manager_for_dir(str(self.root / name))

    def path(self, name: str) -> str:
        return str(self.root / name)

    async def controller(self, topic_id: bytes, partition: int, log_dir: str) -> bool:
        """Answers as the controller does once it has committed the record."""
        await asyncio.sleep(0.01)
        self.assigned.append((topic_id, partition, log_dir))
        return True

    async def close(self) -> None:
        await self.manager.stop()
        self.dirs.close()


async def _produce_while(partition: Partition, done: asyncio.Event, sent: list[int]) -> None:
    while not done.is_set():
        result = partition.append_from_client(memoryview(make_batch(2, tag=f"w{len(sent)}")))
        sent.append(result.base_offset)
        # Paced (about 1,000 batches a second): unpaced on a loaded machine the writer
        # outran the copier thread by hundreds of thousands of offsets, and the log's
        # 4,000-byte segments took more files than the process may open.
        await asyncio.sleep(0.001)


async def _until(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.005)


def test_a_move_while_writes_go_on_ends_with_every_record_in_the_new_dir(tmp_path: Path) -> None:
    async def scenario() -> None:
        broker = Broker(tmp_path)
        broker.moves.runner.assign = broker.controller
        swaps: list[str] = []
        broker.moves.runner.on_change = lambda: swaps.append("swap")
        partition = broker.partition("t", 0, "a")
        for _ in range(200):
            partition.append_from_client(memoryview(make_batch(5)))
        done, sent = asyncio.Event(), []  # type: ignore[var-annotated]
        writer = asyncio.ensure_future(_produce_while(partition, done, sent))
        errors = await broker.moves.alter({("t", 0): broker.path("b")})
        assert errors == {("t", 0): ErrorCode.NONE}
        assert broker.moves.is_moving("t", 0)
        await _until(lambda: not broker.moves.is_moving("t", 0))
        done.set()
        await writer
        assert swaps == ["swap"]
        assert broker.assigned == [(bytes(16), 0, broker.path("b"))]
        assert partition.log.directory == tmp_path / "b" / "t-0"
        # Writes after the swap go to the new log; nothing was lost or repeated.
        partition.append_from_client(memoryview(make_batch(1)))
        offsets = [h.base_offset for h in partition.log.iter_batch_headers()]
        assert offsets == sorted(set(offsets)) and offsets[0] == 0
        assert partition.log.log_end_offset == 1000 + 2 * len(sent) + 1
        assert not (tmp_path / "a" / "t-0").exists()
        # Moving it to where it is answers NONE and does nothing.
        assert await broker.moves.alter({("t", 0): broker.path("b")}) == {("t", 0): ErrorCode.NONE}
        assert not broker.moves.is_moving("t", 0)
        await broker.close()

    run(scenario())


def test_the_swap_waits_for_the_controller(tmp_path: Path) -> None:
    async def scenario() -> None:
        broker = Broker(tmp_path)
        gate = asyncio.Event()
        calls: list[str] = []

        async def slow_controller(topic_id: bytes, index: int, log_dir: str) -> bool:
            calls.append(log_dir)
            if len(calls) == 1:
                return False  # the first answer is an error: sent again
            await gate.wait()
            return True

        broker.moves.runner.assign = slow_controller
        partition = broker.partition("t", 0, "a")
        partition.append_from_client(memoryview(make_batch(5)))
        await broker.moves.alter({("t", 0): broker.path("b")})
        await _until(lambda: len(calls) == 2)
        move = broker.moves.move_of("t", 0)
        assert move is not None and move.state is ReassignmentState.QUEUED
        await asyncio.sleep(0.2)
        assert partition.log.directory.parent == tmp_path / "a", "swapped before the answer"
        gate.set()
        await _until(lambda: not broker.moves.is_moving("t", 0))
        assert partition.log.directory.parent == tmp_path / "b"
        await broker.close()

    run(scenario())


def test_the_apis_errors(tmp_path: Path) -> None:
    async def scenario() -> None:
        broker = Broker(tmp_path)
        broker.partition("t", 0, "a")
        broker.partition("gone", 0, "a")
        broker.manager.get("gone", 0).stop()  # type: ignore[union-attr]
        answers = await broker.moves.alter(
            {
                ("t", 0): str(tmp_path / "nope"),
                ("t" * 250, 0): broker.path("b"),
                ("unknown", 0): broker.path("b"),
                ("gone", 0): broker.path("b"),
            }
        )
        assert answers == {
            ("t", 0): ErrorCode.LOG_DIR_NOT_FOUND,
            ("t" * 250, 0): ErrorCode.INVALID_TOPIC_EXCEPTION,
            ("unknown", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        }
        # A dir spelled with a trailing "/." is still not one of log.dirs (Kafka
        # compares absolute paths as strings).
        assert (await broker.moves.alter({("t", 0): broker.path("b") + "/."}))[
            ("t", 0)
        ] == ErrorCode.LOG_DIR_NOT_FOUND
        broker.manager_of("b").report_io_error(OSError(5, "injected"))
        assert await broker.moves.alter({("t", 0): broker.path("b")}) == {
            ("t", 0): ErrorCode.KAFKA_STORAGE_ERROR
        }
        await broker.close()

    run(scenario())


def test_a_partition_not_hosted_yet_is_created_in_the_dir_asked(tmp_path: Path) -> None:
    async def scenario() -> None:
        broker = Broker(tmp_path)
        broker.partition("other", 0, "b")
        broker.partition("other", 1, "b")  # b/ holds more: new logs would go to a/
        answers = await broker.moves.alter({("later", 0): broker.path("b")})
        assert answers == {("later", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        created = broker.manager.create("later", 0, {})
        assert created.log.directory.parent == tmp_path / "b"
        await broker.close()

    run(scenario())


def test_asking_for_another_dir_cancels_the_move_under_way(tmp_path: Path) -> None:
    async def scenario() -> None:
        broker = Broker(tmp_path / "x")
        (tmp_path / "x").mkdir(exist_ok=True)
        gate = asyncio.Event()

        async def held(topic_id: bytes, index: int, log_dir: str) -> bool:
            await gate.wait()
            return True

        broker.moves.runner.assign = held
        partition = broker.partition("t", 0, "a")
        partition.append_from_client(memoryview(make_batch(5)))
        await broker.moves.alter({("t", 0): broker.path("b")})
        await _until(lambda: broker.dirs.future_log("t", 0) is not None)
        changes: list[int] = []
        broker.moves.runner.on_change = lambda: changes.append(1)
        await _until(
            lambda: (
                broker.moves.move_of("t", 0) is not None
                and broker.moves.move_of("t", 0).state is ReassignmentState.QUEUED
            )  # type: ignore[union-attr]
        )
        # Back to where it is: the move is cancelled, the future log deleted, and
        # the assignment the controller may have made is put back.
        assert await broker.moves.alter({("t", 0): broker.path("a")}) == {("t", 0): ErrorCode.NONE}
        assert not broker.moves.is_moving("t", 0)
        assert broker.dirs.future_log("t", 0) is None and changes == [1]
        gate.set()
        assert partition.log.directory.parent == tmp_path / "x" / "a"
        await broker.close()

    run(scenario())


def test_a_move_cut_short_by_a_stop_resumes_at_the_next_start(tmp_path: Path) -> None:
    async def first_run() -> int:
        broker = Broker(tmp_path)
        gate = asyncio.Event()

        async def never(topic_id: bytes, index: int, log_dir: str) -> bool:
            await gate.wait()
            return True

        broker.moves.runner.assign = never
        partition = broker.partition("t", 0, "a")
        for _ in range(100):
            partition.append_from_client(memoryview(make_batch(5)))
        await broker.moves.alter({("t", 0): broker.path("b")})
        found = broker.dirs.future_log("t", 0)
        assert found is not None
        await _until(lambda: found[1].log_end_offset == 500)
        partition.append_from_client(memoryview(make_batch(5)))
        await broker.close()  # a clean stop: the future log stays
        return partition.log.log_end_offset

    async def second_run(end: int) -> None:
        broker = Broker(tmp_path)
        broker.moves.runner.assign = broker.controller
        assert broker.dirs.future_log("t", 0) is not None
        broker.moves.resume()
        assert broker.moves.is_moving("t", 0)
        partition = broker.manager.get("t", 0)
        assert partition is not None
        # Until the metadata names the topic's id the controller cannot be told:
        # the move waits, caught up, and swaps once it can.
        await asyncio.sleep(0.3)
        assert broker.moves.is_moving("t", 0) and not broker.assigned
        partition.topic_id = bytes(16)
        await _until(lambda: not broker.moves.is_moving("t", 0))
        assert partition.log.directory == tmp_path / "b" / "t-0"
        assert partition.log.log_end_offset == end
        await broker.close()

    end = run(first_run())
    run(second_run(end))
