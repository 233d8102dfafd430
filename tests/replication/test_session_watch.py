"""Fetch sessions that read only what changed (session_watch) against ones that read everything.

A session given the broker's partitions (``states``) reads the partitions a
fetch names and those marked dirty; one without reads every partition, as
Kafka does.  Driven through the same random history of appends, follower
fetches, log start moves, leadership changes and forgotten partitions, both
must answer exactly the same partitions with the same offsets.  And an idle
follower whose partitions the leader skips must stay in the ISR.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.integration.test_fetch_sessions import fetch_body
from tests.replication.helpers import make_batch
from tests.replication.test_replica_manager import (
    TOPIC,
    TOPIC_ID,
    Harness,
    broker,
    partition_record,
    run,
)

from samsa.protocol.metadata_records import make_record
from samsa.replication import FetchWaiter, ReplicaManager
from samsa.replication.partition import Partition
from samsa.server.fetch_sessions.cache import FULL_CHECK_MS, FetchContext, FetchSessionCache
from samsa.server.handlers import fetch as fetch_handler
from samsa.server.handlers.fetch import read_partitions

PARTITIONS = 4
FOLLOWER = 2

Key = tuple[str, int]


def request(session_id: int, epoch: int, named: dict[int, int], forget: list[int]) -> dict:
    return fetch_body(session_id, epoch, TOPIC, named, forget)


def summary(responses: list[dict[str, Any]]) -> dict[Key, tuple[int, int, int, int]]:
    """What a response tells the client of each partition it answers."""
    return {
        (t["topic"], p["partition_index"]): (
            p["error_code"],
            p["high_watermark"],
            p["log_start_offset"],
            len(p["records"] or b""),
        )
        for t in responses
        for p in t["partitions"]
    }


def lead_partitions(h: Harness) -> None:
    """PARTITIONS partitions led here (broker 1), followed by FOLLOWER."""
    h.commit(
        broker(1),
        broker(FOLLOWER),
        make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
        *[partition_record(i, [1, FOLLOWER], leader=1) for i in range(PARTITIONS)],
    )


def follower_reaches_end(partition: Partition, now_ms: int) -> None:
    """FOLLOWER fetches at the leader's log end: the high watermark follows."""
    partition.read_for_follower(
        FOLLOWER,
        partition.log_end_offset,
        current_leader_epoch=partition.leader_epoch,
        last_fetched_epoch=-1,
        follower_log_start_offset=0,
        max_bytes=1 << 20,
        min_one=True,
        now_ms=now_ms,
    )


class Client:
    """A consumer of the session's partitions: names a partition again when its
    position moves (after records, or when it starts over at the log start)."""

    def __init__(self, cache: FetchSessionCache, replicas: ReplicaManager) -> None:
        self.cache = cache
        self.broker = SimpleNamespace(replicas=replicas)
        self.positions = dict.fromkeys(range(PARTITIONS), 0)
        self.named: dict[int, int] = dict(self.positions)
        self.forget: list[int] = []
        self.session_id = 0
        self.epoch = 0

    def fetch(self, now_ms: int) -> dict[Key, tuple[int, int, int, int]]:
        req = request(self.session_id, self.epoch, self.named, self.forget)
        ctx = self.cache.new_context(req, now_ms, privileged=False)
        assert isinstance(ctx, FetchContext)
        responses, _ = read_partitions(self.broker, {**req, "topics": ctx.topics})
        session_id, answered = ctx.finish(responses, now_ms)
        assert session_id != 0
        self.session_id, self.epoch = session_id, self.epoch + 1
        self.named, self.forget = {}, []
        got = summary(answered)
        for (_, index), (error, high_watermark, log_start, size) in got.items():
            if size:  # small batches: all of them up to the high watermark
                self.move(index, high_watermark)
            elif error == 1:  # OFFSET_OUT_OF_RANGE: start over at the log start
                self.move(index, log_start)
        return got

    def move(self, index: int, position: int) -> None:
        self.positions[index] = position
        self.named[index] = position


OPS = st.lists(
    st.tuples(
        st.sampled_from(["append", "replicate", "delete", "elsewhere", "back", "forget", "tick"]),
        st.integers(0, PARTITIONS - 1),
        st.integers(1, 3),
    ),
    max_size=25,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
@example(ops=[("append", 0, 2), ("replicate", 0, 1), ("tick", 0, 1), ("delete", 0, 1)])
@example(ops=[("elsewhere", 1, 1), ("tick", 1, 1), ("back", 1, 1), ("forget", 2, 1)])
def test_reading_only_what_changed_answers_what_reading_everything_answers(
    tmp_path_factory: Any, ops: list[tuple[str, int, int]]
) -> None:
    tmp_path: Path = tmp_path_factory.mktemp("watch")

    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            lead_partitions(h)
            watched = Client(FetchSessionCache(10, states=h.manager.session_partitions), h.manager)
            everything = Client(FetchSessionCache(10), h.manager)
            forgotten: set[int] = set()

            def both_fetch() -> None:
                now = h.clock()
                assert watched.fetch(now) == everything.fetch(now)

            both_fetch()
            for op, index, count in ops:
                partition = h.manager.get(TOPIC, index)
                assert partition is not None
                if op == "append" and partition.is_leader:
                    partition.append_from_client(memoryview(make_batch(count)))
                elif op == "replicate" and partition.is_leader:
                    follower_reaches_end(partition, h.clock())
                elif op == "delete":
                    # Nothing reports a log start move: the backstop finds it.
                    partition.log.delete_records(partition.high_watermark)
                    h.clock.advance(FULL_CHECK_MS)
                elif op in ("elsewhere", "back"):
                    h.commit(
                        make_record(
                            "PartitionChangeRecord",
                            topic_id=TOPIC_ID,
                            partition_id=index,
                            leader=FOLLOWER if op == "elsewhere" else 1,
                        )
                    )
                elif op == "forget":
                    for client in (watched, everything):
                        if index in forgotten:
                            client.move(index, client.positions[index])
                        else:
                            client.forget.append(index)
                            client.named.pop(index, None)
                    forgotten ^= {index}
                elif op == "tick":
                    h.clock.advance(1_000)
                both_fetch()
            # Nothing happens: nothing is answered, by either.
            h.clock.advance(FULL_CHECK_MS)
            both_fetch()
            both_fetch()
        finally:
            await h.close()

    run(scenario())


def test_an_idle_session_reads_nothing_and_parks_once(tmp_path: Path) -> None:
    """The point of it all: an idle incremental fetch reads no partition, its
    long poll parks one waiter, and an append wakes it with that partition."""

    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            lead_partitions(h)
            cache = FetchSessionCache(10, states=h.manager.session_partitions)
            client = Client(cache, h.manager)
            client.fetch(h.clock())
            client.fetch(h.clock())
            req = request(client.session_id, client.epoch, {}, [])
            ctx = cache.new_context(req, h.clock(), privileged=False)
            assert isinstance(ctx, FetchContext) and ctx.topics == []
            waiter = FetchWaiter(1)
            assert ctx.park(waiter) and h.manager.parked_fetches() == 1
            partition = h.manager.get(TOPIC, 2)
            assert partition is not None
            partition.append_from_client(memoryview(make_batch(1)))
            assert not waiter.future.done()  # a consumer waits for the high watermark
            follower_reaches_end(partition, h.clock())
            assert waiter.future.done()
            ctx.unpark(waiter)
            assert h.manager.parked_fetches() == 0
            assert [p["partition"] for t in ctx.reread_topics() for p in t["partitions"]] == [2]
        finally:
            await h.close()

    run(scenario())


def follower_request(session_id: int, epoch: int, offsets: dict[int, int]) -> dict:
    req = request(session_id, epoch, offsets, [])
    for topic in req["topics"]:
        for p in topic["partitions"]:
            p["current_leader_epoch"] = 0
            p["last_fetched_epoch"] = -1
            p["log_start_offset"] = 0
    return {**req, "replica_id": FOLLOWER}


def follower_fetch(
    h: Harness, cache: FetchSessionCache, session_id: int, epoch: int, offsets: dict[int, int]
) -> tuple[int, list[Key]]:
    """One Fetch of FOLLOWER in its session: the session id and what was read."""
    req = follower_request(session_id, epoch, offsets)
    ctx = cache.new_context(req, h.clock(), privileged=True, replica_id=FOLLOWER)
    assert isinstance(ctx, FetchContext)
    read = [(t["topic"], p["partition"]) for t in ctx.topics for p in t["partitions"]]
    responses, _ = read_partitions(
        SimpleNamespace(replicas=h.manager), {**req, "topics": ctx.topics}
    )
    new_id, _ = ctx.finish(responses, h.clock())
    return new_id, read


def test_a_follower_outside_the_isr_is_read_on_every_fetch(tmp_path: Path) -> None:
    """Each read of a caught-up follower outside the ISR may expand the ISR (here
    the expansion stays in flight: no controller), so the leader never skips
    it, as Kafka retries the expansion on every fetch; in sync, it is skipped."""

    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            h.commit(
                broker(1),
                broker(FOLLOWER),
                make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
                make_record(
                    "PartitionRecord",
                    topic_id=TOPIC_ID,
                    partition_id=0,
                    replicas=[1, FOLLOWER],
                    isr=[1],
                    leader=1,
                    leader_epoch=0,
                    partition_epoch=0,
                ),
                partition_record(1, [1, FOLLOWER], leader=1),
            )
            cache = FetchSessionCache(10, states=h.manager.session_partitions)
            session_id, _ = follower_fetch(h, cache, 0, 0, {0: 0, 1: 0})
            for epoch in (1, 2, 3):
                assert follower_fetch(h, cache, session_id, epoch, {}) == (session_id, [(TOPIC, 0)])
        finally:
            await h.close()

    run(scenario())


def test_a_follower_idle_in_its_session_stays_in_sync_one_that_stops_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leader skips a caught-up follower's idle partitions, which Kafka would
    read -- each read proving the follower caught up.  The proof of the
    session's fetches must still count: well past replica.lag.time.max.ms, an
    append to a partition it never named again does not shrink the ISR.  Once
    the follower stops fetching, the ISR shrinks as before."""

    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        monkeypatch.setattr(fetch_handler, "wall_ms", h.clock)  # the reads' time: the test's
        try:
            lag_ms = h.manager.config.replica_lag_time_max_ms
            lead_partitions(h)
            cache = FetchSessionCache(10, states=h.manager.session_partitions)

            def fetch(session_id: int, epoch: int, offsets: dict[int, int]) -> int:
                return follower_fetch(h, cache, session_id, epoch, offsets)[0]

            session_id = fetch(0, 0, dict.fromkeys(range(PARTITIONS), 0))
            for epoch in range(1, 8):  # idle: nothing read, for 3.5 lags
                h.clock.advance(lag_ms // 2)
                assert fetch(session_id, epoch, {}) == session_id
            assert all(
                (TOPIC, i) not in cache.get(session_id).watch.dirty for i in range(PARTITIONS)
            )
            partition = h.manager.get(TOPIC, 1)
            assert partition is not None
            partition.append_from_client(memoryview(make_batch(1)))
            assert h.manager.maybe_shrink_isrs(h.clock()) == 0

            h.clock.advance(lag_ms + 1)  # the follower stopped fetching
            assert h.manager.maybe_shrink_isrs(h.clock()) == 1
            state = partition.leader_state
            assert state is not None and state.isr_state.sent.isr == (1,)  # proposed
        finally:
            await h.close()

    run(scenario())


def test_the_full_check_compares_a_step_of_the_session_per_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follower's session of thousands of partitions is compared a slice per
    fetch (in one fetch it held the leader's loop 10-30 ms): a log start
    move nothing reported is found once the pass reaches its partition."""
    from samsa.server.fetch_sessions import cache as fetch_sessions

    monkeypatch.setattr(fetch_sessions, "FULL_CHECK_STEP", 1)

    async def scenario() -> None:
        h = Harness(tmp_path, channels=False)
        try:
            lead_partitions(h)
            client = Client(FetchSessionCache(10, states=h.manager.session_partitions), h.manager)
            last = h.manager.get(TOPIC, PARTITIONS - 1)
            assert last is not None
            last.append_from_client(memoryview(make_batch(2)))
            follower_reaches_end(last, h.clock())
            client.fetch(h.clock())
            client.fetch(h.clock())
            assert client.fetch(h.clock()) == {}  # idle
            last.log.delete_records(last.high_watermark)  # nothing reports it
            h.clock.advance(FULL_CHECK_MS)
            answers = [client.fetch(h.clock()) for _ in range(PARTITIONS)]
            assert answers[:-1] == [{}] * (PARTITIONS - 1)
            assert list(answers[-1]) == [(TOPIC, PARTITIONS - 1)]
            assert client.fetch(h.clock()) == {}  # the pass is over
        finally:
            await h.close()

    run(scenario())
