"""The metadata loader applies committed records, a transaction whole or not at all."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.protocol.metadata_records import MetadataRecord, encode_metadata_record, make_record
from samsa.raft.persistence.memory_log import MemoryRaftLog
from samsa.raft.records import Entry
from samsa.server.metadata.loader import MetadataLoader

TOPIC_ID = uuid.UUID(int=42).bytes


class Recorder:
    def __init__(self) -> None:
        self.topics_seen: list[set[str]] = []

    def on_delta(self, delta: MetadataDelta) -> None:
        self.topics_seen.append(set(delta.image.topics))

    def on_image(self, image: MetadataImage) -> None:
        self.topics_seen.append(set(image.topics))


def _topic(name: str = "orders") -> list[MetadataRecord]:
    return [make_record("TopicRecord", name=name, topic_id=TOPIC_ID), *_partitions(0, 1)]


def _loader(records: list[MetadataRecord]) -> tuple[MetadataLoader, Recorder]:
    log = MemoryRaftLog()
    log.append_as_leader([encode_metadata_record(r) for r in records], epoch=1)
    loader = MetadataLoader(log)
    recorder = Recorder()
    loader.add_publisher(recorder)
    return loader, recorder


def _in_loop(work: object) -> None:
    async def run() -> None:
        work()  # type: ignore[operator]

    asyncio.run(run())


def test_a_transaction_is_applied_only_when_it_ends() -> None:
    records = [
        make_record("BeginTransactionRecord"),
        *_topic(),
        make_record("EndTransactionRecord"),
    ]
    loader, recorder = _loader(records)

    def work() -> None:
        loader.handle_commit(3)  # Begin, Topic, Partition committed; End not yet
        assert "orders" not in loader.image.topics and loader.has_open_transaction
        loader.handle_commit(4)
        assert loader.image.topics["orders"].partitions[0].leader == 1
        assert not loader.has_open_transaction
        assert recorder.topics_seen == [{"orders"}]  # one delta: the whole write

    _in_loop(work)


def test_an_aborted_transaction_leaves_no_trace() -> None:
    records = [
        make_record("BeginTransactionRecord"),
        *_topic("half"),
        make_record("AbortTransactionRecord", reason="failover"),
        *_topic("whole"),
    ]
    loader, _ = _loader(records)

    def work() -> None:
        loader.handle_commit(len(records))
        assert set(loader.image.topics) == {"whole"}

    _in_loop(work)


def test_records_outside_transactions_apply_at_once() -> None:
    loader, recorder = _loader(_topic())

    def work() -> None:
        loader.handle_commit(1)
        assert set(loader.image.topics) == {"orders"}
        assert recorder.topics_seen == [{"orders"}]

    _in_loop(work)


def test_a_clean_stop_snapshots_a_long_tail_and_only_a_long_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A restart loads the snapshot instead of replaying the tail (a broker of
    10,000 partitions adds ~1.3 MB of leadership records per restart)."""
    import samsa.server.metadata.loader as loader_module

    written: list[int] = []
    loader, _ = _loader(_topic())
    loader._create_snapshot = lambda offset, data: written.append(offset)
    _in_loop(lambda: loader.handle_commit(2))
    loader.snapshot_at_stop()
    assert written == []  # a short tail: nothing written at stop
    monkeypatch.setattr(loader_module, "STOP_SNAPSHOT_BYTES", 1)
    loader.snapshot_at_stop()
    assert written == [2]


def test_a_clean_stop_snapshots_what_was_committed_but_not_yet_replayed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A controlled shutdown commits a change of every partition the broker
    hosts just before the stop, while the loop still replays them a step at a
    time: the snapshot at stop holds them all (at the committed offset, not
    where the last step ended), so the next start does not replay them."""
    import samsa.server.metadata.loader as loader_module
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    monkeypatch.setattr(loader_module, "STOP_SNAPSHOT_BYTES", 1)
    count = 5 * RECORDS_PER_STEP
    records = [*_topic(), *_partitions(1, count)]
    committed = len(records) - 3  # the last records are not committed
    loader, recorder = _loader(records)
    written: list[int] = []
    snapshots: list[MetadataImage] = []

    def create_snapshot(offset: int, data: bytes) -> None:
        written.append(offset)
        snapshots.append(loader.image)

    loader._create_snapshot = create_snapshot

    async def run() -> None:
        loader.handle_commit(committed)  # the first step runs; the rest are queued
        assert loader.applied_offset < committed
        loader.snapshot_at_stop()
        # No step was left to run after the stop, and none published the tail.
        await asyncio.sleep(0)
        assert len(recorder.topics_seen) == 1

    asyncio.run(run())
    assert written == [committed]
    assert len(snapshots[0].topics["orders"].partitions) == committed - 1


def test_a_clean_stop_after_creating_a_few_thousand_partitions_snapshots_them() -> None:
    """The next start would replay every record since the last snapshot (here:
    none, so all of them): a tail of ~2,000 partition records is worth a
    snapshot at stop, not only tails of megabytes."""
    records = [*_topic(), *_partitions(1, 2000)]
    loader, _ = _loader(records)
    written: list[int] = []
    loader._create_snapshot = lambda offset, data: written.append(offset)
    _in_loop(lambda: loader.handle_commit(len(records)))
    loader.snapshot_at_stop()
    assert written == [len(records)]


def _partitions(first: int, count: int, leader: int = 1) -> list[MetadataRecord]:
    return [
        make_record(
            "PartitionRecord",
            partition_id=p,
            topic_id=TOPIC_ID,
            replicas=[leader],
            isr=[leader],
            leader=leader,
            leader_epoch=0,
            partition_epoch=0,
        )
        for p in range(first, first + count)
    ]


def test_many_records_outside_a_transaction_are_replayed_a_step_at_a_time() -> None:
    """Thousands of leadership changes (a fenced broker) must not hold the loop in
    one piece: each step replays RECORDS_PER_STEP and lets the loop run."""
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    count = 2 * RECORDS_PER_STEP + 10
    records = [*_topic(), *_partitions(1, count)]
    loader, recorder = _loader(records)

    async def run() -> None:
        loader.handle_commit(len(records))
        assert len(loader.image.topics["orders"].partitions) == RECORDS_PER_STEP - 1
        assert not loader.loaded.is_set()
        applied = asyncio.ensure_future(loader.wait_applied(len(records) - 1))
        await asyncio.wait_for(applied, 5)
        assert len(loader.image.topics["orders"].partitions) == count + 1
        assert len(recorder.topics_seen) == 3
        assert loader.loaded.is_set()

    asyncio.run(run())


class CountingLog(MemoryRaftLog):
    """Remembers how far each read asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def read(self, from_offset: int, max_entries: int, max_bytes: int | None = None) -> list[Entry]:
        self.asked.append(from_offset + max_entries)
        return super().read(from_offset, max_entries, max_bytes)


def test_reads_ask_for_committed_entries_only() -> None:
    """A read decodes whole batches up to what it asks for: asking a step's worth
    while the high watermark creeps a few entries at a time decoded hundreds
    of entries per step to replay a few."""
    records = [*_topic(), *_partitions(1, 40)]
    log = CountingLog()
    log.append_as_leader([encode_metadata_record(r) for r in records], epoch=1)
    loader = MetadataLoader(log)

    async def run() -> None:
        for high_watermark in range(2, len(records) + 1, 3):
            loader.handle_commit(high_watermark)
            await asyncio.wait_for(loader.wait_applied(high_watermark - 1), 5)
            assert max(log.asked) <= high_watermark
        loader.handle_commit(len(records))

    asyncio.run(run())
    assert len(loader.image.topics["orders"].partitions) == 41


def test_entries_past_the_high_watermark_are_read_again_once_committed() -> None:
    """What was read ahead stops at the high watermark: an uncommitted suffix may
    be truncated and written anew by the next leader, and the new one counts."""
    log = MemoryRaftLog()
    log.append_as_leader([encode_metadata_record(r) for r in _topic()], epoch=1)
    log.append_as_leader([encode_metadata_record(r) for r in _partitions(1, 1)], epoch=1)
    loader = MetadataLoader(log)

    async def run() -> None:
        loader.handle_commit(2)  # the topic and partition 0; partition 1 not committed
        await asyncio.wait_for(loader.wait_applied(1), 5)
        log.truncate_to(2)
        [replacement] = _partitions(1, 1, leader=2)
        log.append_as_leader([encode_metadata_record(replacement)], epoch=2)
        loader.handle_commit(3)
        await asyncio.wait_for(loader.wait_applied(2), 5)

    asyncio.run(run())
    assert loader.image.topics["orders"].partitions[1].leader == 2


def test_a_transaction_longer_than_a_step_is_still_applied_whole() -> None:
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    count = 2 * RECORDS_PER_STEP
    records = [
        make_record("BeginTransactionRecord"),
        *_topic(),
        *_partitions(1, count),
        make_record("EndTransactionRecord"),
    ]
    loader, recorder = _loader(records)

    async def run() -> None:
        loader.handle_commit(len(records))
        # The first step only read (and decoded) part of the transaction.
        assert loader.has_open_transaction
        assert "orders" not in loader.image.topics and recorder.topics_seen == []
        await asyncio.wait_for(loader.wait_applied(len(records) - 1), 5)
        assert len(loader.image.topics["orders"].partitions) == count + 1
        assert recorder.topics_seen == [{"orders"}]

    asyncio.run(run())


def _big_transaction(
    name: str, count: int, end: str = "EndTransactionRecord"
) -> list[MetadataRecord]:
    topic_id = uuid.uuid5(uuid.NAMESPACE_OID, name).bytes
    return [
        make_record("BeginTransactionRecord"),
        make_record("TopicRecord", name=name, topic_id=topic_id),
        *(
            make_record(
                "PartitionRecord",
                partition_id=p,
                topic_id=topic_id,
                replicas=[1 + p % 3, 1 + (p + 1) % 3],
                isr=[1 + p % 3, 1 + (p + 1) % 3],
                leader=1 + p % 3,
                leader_epoch=0,
                partition_epoch=0,
            )
            for p in range(count)
        ),
        make_record(end, **({"reason": "failover"} if end == "AbortTransactionRecord" else {})),
    ]


async def _replay_watching(
    loader: MetadataLoader, records: list[MetadataRecord], recorder: Recorder | None = None
) -> list[set[str]]:
    """Replay every record a step at a time; the topics a reader saw between
    steps (and, with ``recorder``, how many deltas were published by then)."""
    seen: list[set[str]] = []
    loader.handle_commit(len(records))
    while loader.applied_offset < len(records) or loader._next_step is not None:
        published = set() if recorder is None else {f"published {len(recorder.topics_seen)}"}
        seen.append(set(loader.image.topics) | published)
        await asyncio.sleep(0)
    return seen


def test_a_reader_between_the_steps_of_a_transaction_sees_it_whole_or_not_at_all() -> None:
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    count = 3 * RECORDS_PER_STEP
    records = [*_topic("before"), *_big_transaction("sliced", count)]
    loader, recorder = _loader(records)

    async def run() -> list[int]:
        loader.handle_commit(len(records))
        seen = []
        while loader.applied_offset < len(records) or loader._next_step is not None:
            topic = loader.image.topics.get("sliced")
            seen.append(-1 if topic is None else len(topic.partitions))
            await asyncio.sleep(0)
        return seen

    seen = asyncio.run(run())
    assert len(seen) >= 3  # the transaction took several steps
    assert set(seen) == {-1, count}
    assert len(loader.image.topics["sliced"].partitions) == count
    assert recorder.topics_seen == [{"before"}, {"before", "sliced"}]


def test_a_long_transaction_is_published_in_the_callback_after_its_replay() -> None:
    """Replaying the end of 1,000 partitions and the broker working out what
    they mean for it held the loop in one piece: two callbacks now."""
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    records = [*_topic("before"), *_big_transaction("sliced", 2 * RECORDS_PER_STEP)]
    loader, recorder = _loader(records)
    seen = asyncio.run(_replay_watching(loader, records, recorder))
    assert {"before", "sliced", "published 1"} in seen  # in the image, not yet published
    assert recorder.topics_seen == [{"before"}, {"before", "sliced"}]
    assert loader.loaded.is_set()


def test_a_sliced_transaction_ends_in_the_image_a_single_step_builds() -> None:
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    records = [
        *_topic("before"),
        *_big_transaction("first", 2 * RECORDS_PER_STEP + 7),
        *_big_transaction("second", RECORDS_PER_STEP // 2),
    ]
    stepped, _ = _loader(records)
    asyncio.run(_replay_watching(stepped, records))
    whole, _ = _loader(records)
    whole.handle_commit(len(records))  # outside a loop: everything in one go
    assert stepped.image == whole.image
    assert stepped.image.brokers_to_isrs == whole.image.brokers_to_isrs


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 450), st.booleans()), min_size=1, max_size=4))
def test_any_mix_of_transactions_steps_into_the_image_one_go_builds(
    writes: list[tuple[int, bool]],
) -> None:
    records = [*_topic("before")]
    for n, (count, aborted) in enumerate(writes):
        end = "AbortTransactionRecord" if aborted else "EndTransactionRecord"
        records += _big_transaction(f"t{n}", count, end=end)
    stepped, _ = _loader(records)
    asyncio.run(_replay_watching(stepped, records))
    whole, _ = _loader(records)
    whole.handle_commit(len(records))
    assert stepped.image == whole.image
    assert set(whole.image.topics) == {"before"} | {
        f"t{n}" for n, (_, aborted) in enumerate(writes) if not aborted
    }


def test_an_aborted_transaction_longer_than_a_step_publishes_nothing() -> None:
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    records = [
        *_big_transaction("cut", 2 * RECORDS_PER_STEP, end="AbortTransactionRecord"),
        *_topic("after"),
    ]
    loader, recorder = _loader(records)
    seen = asyncio.run(_replay_watching(loader, records))
    assert all("cut" not in topics for topics in seen)
    assert set(loader.image.topics) == {"after"}
    assert recorder.topics_seen == [{"after"}]


def test_a_snapshot_loaded_between_the_steps_of_a_transaction_replaces_the_held_part() -> None:
    """A follower that fell behind loads the leader's snapshot while it holds part
    of a transaction: the snapshot is a whole state, the held part is dropped."""
    from samsa.raft.persistence.raft_log import Snapshot
    from samsa.raft.records import SnapshotId
    from samsa.server.metadata.loader import RECORDS_PER_STEP

    records = [*_big_transaction("sliced", 2 * RECORDS_PER_STEP), *_topic("after")]
    leader, _ = _loader(records)
    snapshots: list[tuple[int, bytes]] = []
    leader._create_snapshot = lambda offset, data: snapshots.append((offset, data))
    leader.handle_commit(len(records))
    leader.write_snapshot()
    [(offset, data)] = snapshots
    follower, recorder = _loader(records)

    async def run() -> None:
        follower.handle_commit(len(records))
        assert follower.has_open_transaction
        follower.handle_load_snapshot(Snapshot(SnapshotId(offset, 1), None, data))
        assert not follower.has_open_transaction
        for _ in range(3):  # a step that was due reads on from the snapshot
            await asyncio.sleep(0)

    asyncio.run(run())
    assert follower.applied_offset == offset == len(records)
    assert follower.image == leader.image
    assert recorder.topics_seen == [{"sliced", "after"}]


def test_the_collector_is_off_while_a_run_of_steps_replays() -> None:
    """A failover's thousands of changes replayed over many steps made the
    collector scan its oldest generation several times; it is off until the
    run ends, then what the run built is frozen."""
    import gc

    from samsa.server.metadata.loader import RECORDS_PER_STEP

    records = [*_topic(), *_partitions(1, 2 * RECORDS_PER_STEP)]
    loader, _ = _loader(records)
    seen: list[bool] = []

    class Watcher:
        def on_delta(self, delta: MetadataDelta) -> None:
            seen.append(gc.isenabled())

        def on_image(self, image: MetadataImage) -> None:
            pass

    loader.add_publisher(Watcher())

    async def run() -> None:
        frozen = gc.get_freeze_count()
        loader.handle_commit(len(records))
        await asyncio.wait_for(loader.wait_applied(len(records) - 1), 5)
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen

    assert gc.isenabled()
    try:
        asyncio.run(run())
    finally:
        gc.unfreeze()
    assert len(seen) == 3 and seen[1:] == [False, False]


def test_a_node_that_stops_mid_run_turns_the_collector_back_on() -> None:
    """A stop between two replay steps (the snapshot skipped: a failed log dir)
    must not leave the collector paused past the loop, for the whole process."""
    import gc

    from samsa.server.metadata.loader import RECORDS_PER_STEP

    records = [*_topic(), *_partitions(1, 3 * RECORDS_PER_STEP)]
    loader, _ = _loader(records)

    async def run() -> None:
        loader.handle_commit(len(records))
        assert not gc.isenabled()  # a run of steps is under way
        loader.stop_stepping()
        assert gc.isenabled()

    try:
        asyncio.run(run())
    finally:
        gc.unfreeze()
    assert gc.isenabled()
    assert len(loader.image.topics["orders"].partitions) < 3 * RECORDS_PER_STEP
