"""The RaftLog contract, run against MemoryRaftLog and DiskRaftLog alike.

Every case runs on both implementations (the ``new_log`` fixture), and a
hypothesis test drives both side by side through random histories, so the disk
log cannot drift from the reference the simulator uses.
"""

from __future__ import annotations

import itertools
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.raft.persistence.disk_log import DiskRaftLog
from samsa.raft.persistence.memory_log import MemoryRaftLog
from samsa.raft.persistence.raft_log import (
    RaftLog,
    ValidationKind,
    truncation_offset,
    validate_offset_and_epoch,
)
from samsa.raft.records import (
    Endpoint,
    Entry,
    LeaderChange,
    OffsetAndEpoch,
    Payload,
    SnapshotId,
    Voters,
)
from samsa.raft.voters import VoterNode, VoterSet

NewLog = Callable[[], RaftLog]

VOTERS = VoterSet(
    (
        VoterNode(1, uuid.UUID(int=11), (Endpoint("CONTROLLER", "10.0.0.1", 9093),)),
        VoterNode(2, None, (Endpoint("CONTROLLER", "10.0.0.2", 9093), Endpoint("X", "h", 1))),
        VoterNode(3),
    )
)


def data_batches(*values: bytes) -> bytes:
    """Snapshot data as the controller hands it over: RecordBatches of records."""
    builder = RecordBatchBuilder()
    for value in values:
        builder.append(1_000, None, value)
    return bytes(builder.build()) if values else b""


def fixed_clock() -> int:
    return 1_700_000_000_000


@pytest.fixture(params=["memory", "disk"])
def new_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NewLog]:
    """A factory of empty logs of one kind (several per test: install across nodes)."""
    opened: list[DiskRaftLog] = []
    counter = itertools.count()

    def make() -> RaftLog:
        if request.param == "memory":
            return MemoryRaftLog()
        log = DiskRaftLog.open(tmp_path / f"node-{next(counter)}", clock=fixed_clock)
        opened.append(log)
        return log

    yield make
    for log in opened:
        log.close()


def fill(log: RaftLog, epochs: list[int]) -> None:
    """One data entry per item of ``epochs`` (b"e<epoch>-<offset>"), as leader."""
    for epoch in epochs:
        log.append_as_leader([b"e%d-%d" % (epoch, log.end_offset)], epoch)


def end_of(log: RaftLog, epoch: int) -> tuple[int, int]:
    answer = log.end_offset_for_epoch(epoch)
    return answer.offset, answer.epoch


def state(log: RaftLog) -> tuple[object, ...]:
    return (
        log.start_offset,
        log.end_offset,
        log.flushed_end_offset,
        log.last_fetched_epoch,
        log.latest_snapshot_id,
        log.earliest_snapshot_id,
    )


# -- empty log, appends, reads --------------------------------------------------------


def test_an_empty_log(new_log: NewLog) -> None:
    log = new_log()
    assert state(log) == (0, 0, 0, 0, None, None)
    assert log.read(0, 10) == []
    assert end_of(log, 3) == (0, 0)
    assert log.append_as_leader([], 1) == range(0, 0)
    with pytest.raises(ValueError):
        log.read(1, 10)


def test_leader_appends_get_dense_offsets_and_read_back_as_written(new_log: NewLog) -> None:
    log = new_log()
    payloads: list[Payload] = [
        LeaderChange(1, (1, 2, 3), (1, 3)),
        b"first",
        b"",
        b"x" * 20_000,  # larger than a batch
        Voters(VOTERS),
        *[b"small-%d" % i for i in range(300)],
    ]
    assert log.append_as_leader(payloads, 4) == range(0, len(payloads))
    assert log.append_as_leader([b"next"], 4) == range(len(payloads), len(payloads) + 1)
    entries = log.read(0, 1_000)
    assert entries == [Entry(i, 4, p) for i, p in enumerate([*payloads, b"next"])]
    assert (log.end_offset, log.last_fetched_epoch, log.flushed_end_offset) == (306, 4, 0)


def test_an_append_below_the_last_epoch_is_refused(new_log: NewLog) -> None:
    log = new_log()
    fill(log, [2, 3])
    with pytest.raises(ValueError):
        log.append_as_leader([b"old"], 2)
    with pytest.raises(ValueError):
        log.append_as_follower([Entry(2, 2, b"old")])
    assert log.end_offset == 2


def test_follower_appends_continue_at_the_end(new_log: NewLog) -> None:
    log = new_log()
    log.append_as_follower(
        [Entry(0, 1, b"a"), Entry(1, 1, LeaderChange(2, (1, 2))), Entry(2, 3, b"c")]
    )
    log.append_as_follower([])
    with pytest.raises(ValueError):
        log.append_as_follower([Entry(4, 3, b"gap")])
    with pytest.raises(ValueError):
        log.append_as_follower([Entry(2, 3, b"again")])
    assert log.read(0, 10) == [
        Entry(0, 1, b"a"),
        Entry(1, 1, LeaderChange(2, (1, 2))),
        Entry(2, 3, b"c"),
    ]
    assert log.last_fetched_epoch == 3


def test_reads_respect_the_limits_but_return_at_least_one_entry(new_log: NewLog) -> None:
    log = new_log()
    log.append_as_leader([b"%03d" % i + b"." * 40 for i in range(50)], 1)
    assert [e.offset for e in log.read(10, 5)] == [10, 11, 12, 13, 14]
    assert [e.offset for e in log.read(10, 0)] == [10]
    assert [e.offset for e in log.read(48, 10)] == [48, 49]
    assert log.read(50, 10) == []
    per_entry = log.read(0, 1)[0].size_bytes()
    assert len(log.read(0, 100, max_bytes=3 * per_entry)) == 3
    assert len(log.read(0, 100, max_bytes=3 * per_entry - 1)) == 2
    assert len(log.read(7, 100, max_bytes=1)) == 1
    with pytest.raises(ValueError):
        log.read(51, 1)


# -- truncation and epochs --------------------------------------------------------------


def test_truncation_is_exact_and_lowers_the_flushed_offset(new_log: NewLog) -> None:
    log = new_log()
    log.append_as_leader([b"a%d" % i for i in range(10)], 1)  # one batch on disk
    log.append_as_leader([b"b%d" % i for i in range(10)], 2)
    log.flush(15)
    log.truncate_to(25)
    assert (log.end_offset, log.flushed_end_offset) == (20, 15)
    log.truncate_to(13)  # inside a batch of epoch 2
    assert (log.end_offset, log.flushed_end_offset, log.last_fetched_epoch) == (13, 13, 2)
    log.truncate_to(4)  # inside the epoch 1 batch
    assert [e.payload for e in log.read(0, 100)] == [b"a0", b"a1", b"a2", b"a3"]
    assert (log.end_offset, log.flushed_end_offset, log.last_fetched_epoch) == (4, 4, 1)
    assert end_of(log, 1) == (4, 1)
    log.append_as_leader([b"c"], 3)
    assert log.read(3, 10) == [Entry(3, 1, b"a3"), Entry(4, 3, b"c")]
    assert end_of(log, 2) == (4, 1)


def test_truncation_to_the_start_empties_the_log(new_log: NewLog) -> None:
    log = new_log()
    fill(log, [1, 1, 2])
    log.truncate_to(0)
    assert state(log) == (0, 0, 0, 0, None, None)


@pytest.mark.parametrize(
    ("epoch", "expected"),
    [
        (0, (0, 0)),  # older than every epoch: the log start, the epoch asked
        (1, (3, 1)),
        (2, (3, 1)),  # epoch 2 never wrote: where epoch 1 ended
        (3, (5, 3)),
        (4, (5, 3)),
        (5, (8, 5)),
        (9, (8, 5)),
    ],
)
def test_end_offset_for_epoch(new_log: NewLog, epoch: int, expected: tuple[int, int]) -> None:
    log = new_log()
    fill(log, [1, 1, 1, 3, 3, 5, 5, 5])
    assert end_of(log, epoch) == expected


def test_divergence_checks_agree(new_log: NewLog) -> None:
    leader = new_log()
    fill(leader, [1, 1, 2, 2, 4, 4])
    assert validate_offset_and_epoch(leader, 6, 4).kind is ValidationKind.VALID
    verdict = validate_offset_and_epoch(leader, 5, 3)
    assert verdict.kind is ValidationKind.DIVERGING
    assert verdict.offset_and_epoch == OffsetAndEpoch(4, 2)
    follower = new_log()
    fill(follower, [1, 1, 2, 3, 3])
    assert verdict.offset_and_epoch is not None
    assert truncation_offset(follower, verdict.offset_and_epoch) == 3


def test_flush_only_moves_forward_and_stops_at_the_end(new_log: NewLog) -> None:
    log = new_log()
    fill(log, [1, 1, 1])
    log.flush(2)
    assert log.flushed_end_offset == 2
    log.flush(1)
    assert log.flushed_end_offset == 2
    log.flush(10)
    assert log.flushed_end_offset == 3


# -- snapshots ---------------------------------------------------------------------------


def test_snapshots_round_trip_their_voters_and_data(new_log: NewLog) -> None:
    log = new_log()
    fill(log, [1, 1, 2, 2])
    data = data_batches(b"topic", b"partition")
    log.create_snapshot(SnapshotId(2, 1), VOTERS, data)
    log.create_snapshot(SnapshotId(4, 2), None, b"")
    with pytest.raises(ValueError):
        log.create_snapshot(SnapshotId(5, 2), None, b"")
    first = log.load_snapshot(SnapshotId(2, 1))
    assert first is not None
    assert (first.snapshot_id, first.voters, first.data) == (SnapshotId(2, 1), VOTERS, data)
    second = log.load_snapshot(SnapshotId(4, 2))
    assert second is not None
    assert (second.voters, second.data) == (None, b"")
    assert log.load_snapshot(SnapshotId(3, 2)) is None
    assert log.read_snapshot(SnapshotId(3, 2), 0, 10) is None
    assert (log.latest_snapshot_id, log.earliest_snapshot_id) == (SnapshotId(4, 2), None)


def test_snapshot_chunks_reassemble_and_install_on_another_log(new_log: NewLog) -> None:
    leader = new_log()
    fill(leader, [1, 2, 2, 3])
    data = data_batches(*[b"record-%d" % i for i in range(100)])
    leader.create_snapshot(SnapshotId(3, 2), VOTERS, data)
    chunks = []
    position = 0
    while True:
        chunk = leader.read_snapshot(SnapshotId(3, 2), position, 100)
        assert chunk is not None
        chunks.append(chunk.data)
        position += len(chunk.data)
        if position >= chunk.size:
            break
    raw = b"".join(chunks)

    follower = new_log()
    fill(follower, [1, 1, 1, 1, 1])  # conflicts with the snapshot
    follower.install_snapshot(SnapshotId(3, 2), raw)
    assert state(follower) == (3, 3, 3, 2, SnapshotId(3, 2), SnapshotId(3, 2))
    assert follower.read(3, 10) == []
    loaded = follower.load_snapshot(SnapshotId(3, 2))
    assert loaded is not None
    assert (loaded.voters, loaded.data) == (VOTERS, data)
    assert end_of(follower, 1) == (3, 1)
    assert end_of(follower, 2) == (3, 2)
    follower.append_as_follower([Entry(3, 3, b"d")])
    assert end_of(follower, 2) == (3, 2)
    assert end_of(follower, 3) == (4, 3)
    assert validate_offset_and_epoch(follower, 2, 1).kind is ValidationKind.SNAPSHOT


def test_install_keeps_newer_snapshots_and_refuses_garbage(new_log: NewLog) -> None:
    source = new_log()
    fill(source, [1, 1, 1, 1])
    source.create_snapshot(SnapshotId(2, 1), None, b"")
    chunk = source.read_snapshot(SnapshotId(2, 1), 0, 1 << 20)
    assert chunk is not None

    log = new_log()
    fill(log, [1, 1, 1, 1])
    log.create_snapshot(SnapshotId(1, 1), None, b"")
    log.create_snapshot(SnapshotId(4, 1), None, b"")
    for garbage in (b"", b"not a snapshot", chunk.data[:-1]):
        with pytest.raises(ValueError):
            log.install_snapshot(SnapshotId(3, 1), garbage)
    assert state(log) == (0, 4, 0, 1, SnapshotId(4, 1), None)
    log.install_snapshot(SnapshotId(2, 1), chunk.data)
    assert state(log) == (2, 2, 2, 1, SnapshotId(4, 1), SnapshotId(2, 1))
    assert log.load_snapshot(SnapshotId(1, 1)) is None
    assert log.load_snapshot(SnapshotId(4, 1)) is not None


def test_delete_before_snapshot_moves_the_start(new_log: NewLog) -> None:
    log = new_log()
    fill(log, [1, 1, 2, 2, 2, 4])
    log.create_snapshot(SnapshotId(2, 1), None, b"")
    log.create_snapshot(SnapshotId(4, 2), VOTERS, b"")
    with pytest.raises(ValueError):
        log.delete_before_snapshot(SnapshotId(3, 2))
    log.delete_before_snapshot(SnapshotId(4, 2))
    assert state(log) == (4, 6, 4, 4, SnapshotId(4, 2), SnapshotId(4, 2))
    assert log.load_snapshot(SnapshotId(2, 1)) is None
    assert [e.offset for e in log.read(4, 10)] == [4, 5]
    with pytest.raises(ValueError):
        log.read(3, 10)
    with pytest.raises(ValueError):
        log.truncate_to(3)
    assert end_of(log, 0) == (4, 0)
    assert end_of(log, 1) == (4, 1)  # older than the snapshot's epoch
    assert end_of(log, 2) == (5, 2)
    assert end_of(log, 3) == (5, 2)
    # a snapshot at the log end empties the log; its epoch is the last fetched one
    log.create_snapshot(SnapshotId(6, 4), None, b"")
    log.delete_before_snapshot(SnapshotId(6, 4))
    assert state(log) == (6, 6, 6, 4, SnapshotId(6, 4), SnapshotId(6, 4))
    assert end_of(log, 3) == (6, 3)
    log.append_as_leader([b"x"], 5)
    assert end_of(log, 4) == (6, 4)
    assert end_of(log, 5) == (7, 5)


# -- random histories, side by side ---------------------------------------------------------

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("lead"), st.integers(0, 3), st.integers(0, 12)),
        st.tuples(st.just("follow"), st.integers(0, 3), st.integers(1, 12)),
        st.tuples(st.just("truncate"), st.integers(0, 40)),
        st.tuples(st.just("flush"), st.integers(0, 40)),
        st.tuples(st.just("snapshot"), st.integers(0, 40)),
        st.tuples(st.just("delete_before"), st.integers(0, 5)),
        st.tuples(st.just("install"), st.integers(0, 30), st.integers(0, 3)),
    ),
    max_size=25,
)


def apply(log: RaftLog, op: tuple[object, ...], epoch_floor: int) -> None:
    kind = op[0]
    end, start = log.end_offset, log.start_offset
    if kind == "lead":
        _, bump, count = op
        assert isinstance(bump, int) and isinstance(count, int)
        payloads: list[Payload] = [b"L%d" % (end + i) for i in range(count)]
        if count and bump:
            payloads[0] = LeaderChange(1, (1, 2, 3))
        if count > 3:
            payloads[3] = Voters(VoterSet.of(range(1, count)))
        log.append_as_leader(payloads, epoch_floor + bump)
    elif kind == "follow":
        _, bump, count = op
        assert isinstance(bump, int) and isinstance(count, int)
        log.append_as_follower(
            [Entry(end + i, epoch_floor + bump + i // 5, b"F%d" % (end + i)) for i in range(count)]
        )
    elif kind == "truncate":
        assert isinstance(op[1], int)
        log.truncate_to(start + op[1] % (end - start + 1))
    elif kind == "flush":
        assert isinstance(op[1], int)
        log.flush(op[1])
    elif kind == "snapshot":
        assert isinstance(op[1], int)
        offset = start + op[1] % (end - start + 1)
        epoch = log.read(offset - 1, 1)[0].epoch if offset > start else log.last_fetched_epoch
        log.create_snapshot(SnapshotId(offset, epoch), VoterSet.of([offset % 5 + 1]), b"")
    elif kind == "delete_before":
        snapshot = log.latest_snapshot_id
        if snapshot is not None and snapshot.offset <= end:
            log.delete_before_snapshot(snapshot)
    elif kind == "install":
        _, ahead, bump = op
        assert isinstance(ahead, int) and isinstance(bump, int)
        source = MemoryRaftLog() if isinstance(log, MemoryRaftLog) else None
        snapshot_id = SnapshotId(end + ahead, epoch_floor + bump)
        log.install_snapshot(snapshot_id, _snapshot_bytes(log, source, snapshot_id))


def _snapshot_bytes(log: RaftLog, memory: MemoryRaftLog | None, snapshot_id: SnapshotId) -> bytes:
    """Bytes of a snapshot as a peer of the same kind would send them."""
    if memory is not None:
        from samsa.raft.persistence.memory_log import encode_snapshot

        return encode_snapshot(VOTERS, b"")
    with tempfile.TemporaryDirectory() as tmp:
        peer = DiskRaftLog.open(Path(tmp), clock=fixed_clock)
        peer.append_as_follower(
            [Entry(i, snapshot_id.epoch, b"") for i in range(snapshot_id.offset)]
        )
        peer.create_snapshot(snapshot_id, VOTERS, b"")
        chunk = peer.read_snapshot(snapshot_id, 0, 1 << 20)
        peer.close()
    assert chunk is not None
    return chunk.data


def observe(log: RaftLog) -> tuple[object, ...]:
    start, end = log.start_offset, log.end_offset
    epochs = range(-0, log.last_fetched_epoch + 2)
    snapshot = log.latest_snapshot_id
    loaded = log.load_snapshot(snapshot) if snapshot is not None else None
    return (
        state(log),
        log.read(start, 1_000),
        log.read(start + (end - start) // 2, 3, max_bytes=40),
        [log.end_offset_for_epoch(epoch) for epoch in epochs],
        None if loaded is None else loaded.voters,
    )


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_random_histories_leave_both_logs_alike(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        memory = MemoryRaftLog()
        disk = DiskRaftLog.open(Path(tmp), clock=fixed_clock)
        try:
            for op in ops:
                floor = max(memory.last_fetched_epoch, 0)
                apply(memory, op, floor)
                apply(disk, op, floor)
                assert observe(disk) == observe(memory), op
        finally:
            disk.close()
