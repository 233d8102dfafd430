"""A fetcher's decisions: requests built from partition states, responses turned into actions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samsa.errors import ErrorCode
from samsa.replication.config import ReplicationConfig
from samsa.replication.fetcher.state import LEADER_BEHIND_FIRST_BACKOFF_MS, FetcherState
from samsa.replication.fetcher.types import (
    AppendRecords,
    FailPartition,
    FetchStatus,
    InitialFetchState,
    TruncateFullyAndStartAt,
    TruncateTo,
)
from samsa.storage.leader_epoch_cache import EpochEndOffset, LeaderEpochFileCache

A = ("a", 0)
B = ("b", 1)
BACKOFF = 1_000
CONFIG = ReplicationConfig(replica_fetch_backoff_ms=BACKOFF)


@dataclass
class FakeLog:
    end: int = 0
    start: int = 0
    epochs: list[tuple[int, int]] = field(default_factory=list)  # (epoch, start offset)

    def cache(self) -> LeaderEpochFileCache:
        return LeaderEpochFileCache(None, "fake", self.epochs)


class FakeLogs:
    def __init__(self, **logs: FakeLog) -> None:
        self.logs = {(name, 0 if name == "a" else 1): log for name, log in logs.items()}

    def log_end_offset(self, tp: tuple[str, int]) -> int:
        return self.logs[tp].end

    def log_start_offset(self, tp: tuple[str, int]) -> int:
        return self.logs[tp].start

    def last_fetched_epoch(self, tp: tuple[str, int]) -> int:
        log = self.logs[tp]
        return -1 if log.end <= log.start else log.cache().epoch_for_offset(log.end - 1)

    def end_offset_for_epoch(self, tp: tuple[str, int], epoch: int) -> EpochEndOffset:
        log = self.logs[tp]
        return log.cache().end_offset_for(epoch, log.end)


def fetcher(logs: FakeLogs, config: ReplicationConfig = CONFIG, epoch: int = 5) -> FetcherState:
    state = FetcherState(replica_id=2, leader_id=1, config=config)
    state.add_partitions({tp: InitialFetchState(1, epoch, 0) for tp in logs.logs}, logs)
    return state


def response(*partitions: tuple[tuple[str, int], dict[str, Any]], error: int = 0) -> dict[str, Any]:
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), fields in partitions:
        entry = {
            "partition_index": index,
            "error_code": 0,
            "high_watermark": 10,
            "log_start_offset": 0,
            "diverging_epoch": None,
            "records": b"",
        }
        entry.update(fields)
        by_topic.setdefault(topic, []).append(entry)
    return {
        "error_code": error,
        "responses": [{"topic": t, "partitions": p} for t, p in by_topic.items()],
    }


def test_fetch_request_names_every_ready_partition_from_its_log_end() -> None:
    logs = FakeLogs(a=FakeLog(end=7, start=2, epochs=[(3, 0)]), b=FakeLog())
    state = fetcher(logs)
    state.truncate_without_epochs(logs)  # b has no epochs
    plan = state.build_fetch(0, logs)
    assert plan is not None
    body = plan.body
    assert body["replica_id"] == 2 and body["session_epoch"] == 0  # opens a session
    parts = {t["topic"]: t["partitions"][0] for t in body["topics"]}
    assert parts["a"]["fetch_offset"] == 7
    assert parts["a"]["last_fetched_epoch"] == 3
    assert parts["a"]["current_leader_epoch"] == 5
    assert parts["a"]["log_start_offset"] == 2
    assert parts["b"]["last_fetched_epoch"] == -1
    assert plan.sent == {A: (7, 5), B: (0, 5)}


def test_records_become_an_append_with_the_leaders_offsets() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    actions = state.handle_fetch_response(
        plan,
        response((A, {"records": b"xyz", "high_watermark": 9, "log_start_offset": 1})),
        0,
        logs,
    )
    assert actions == [AppendRecords(A, b"xyz", 9, 1)]
    assert state.state(A).lag == 5


def test_diverging_epoch_truncates_and_fetching_goes_on() -> None:
    # We hold epoch 4 data (offsets 8-11) that the leader never had: it went 3 -> 5 at 8.
    logs = FakeLogs(a=FakeLog(end=12, epochs=[(3, 0), (4, 8)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None and plan.body["topics"][0]["partitions"][0]["last_fetched_epoch"] == 4
    actions = state.handle_fetch_response(
        plan, response((A, {"diverging_epoch": {"epoch": 3, "end_offset": 8}})), 0, logs
    )
    assert actions == [TruncateTo(A, 8)]
    assert state.state(A).status is FetchStatus.FETCHING


def test_diverging_epoch_we_never_had_steps_back_one_epoch() -> None:
    logs = FakeLogs(a=FakeLog(end=12, epochs=[(1, 0), (4, 8)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    actions = state.handle_fetch_response(
        plan, response((A, {"diverging_epoch": {"epoch": 3, "end_offset": 10}})), 0, logs
    )
    assert actions == [TruncateTo(A, 8)]  # end of our epoch 1; the next fetch asks with 1


def test_offset_out_of_range_below_the_leaders_start_starts_over_there() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    actions = state.handle_fetch_response(
        plan,
        response((A, {"error_code": ErrorCode.OFFSET_OUT_OF_RANGE, "log_start_offset": 50})),
        0,
        logs,
    )
    assert actions == [TruncateFullyAndStartAt(A, 50)]


def test_offset_out_of_range_past_the_leaders_end_truncates_to_its_high_watermark() -> None:
    logs = FakeLogs(a=FakeLog(end=40, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    actions = state.handle_fetch_response(
        plan,
        response((A, {"error_code": ErrorCode.OFFSET_OUT_OF_RANGE, "high_watermark": 30})),
        0,
        logs,
    )
    assert actions == [TruncateTo(A, 30)]


def test_fenced_epoch_pauses_until_new_metadata() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    actions = state.handle_fetch_response(
        plan, response((A, {"error_code": ErrorCode.FENCED_LEADER_EPOCH})), 0, logs
    )
    assert actions == [FailPartition(A, ErrorCode.FENCED_LEADER_EPOCH)]
    assert state.build_fetch(10 * BACKOFF, logs) is None
    state.add_partitions({A: InitialFetchState(1, 6, 0)}, logs)  # new metadata
    assert state.build_fetch(0, logs) is not None


def test_not_leader_backs_off_then_retries() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]), b=FakeLog(end=1, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(100, logs)
    assert plan is not None
    actions = state.handle_fetch_response(
        plan,
        response((A, {"error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER}), (B, {"records": b"r"})),
        100,
        logs,
    )
    assert actions == [AppendRecords(B, b"r", 10, 0)]
    first = LEADER_BEHIND_FIRST_BACKOFF_MS
    assert state.next_wakeup_ms(100) == 100 + first
    later = state.build_fetch(100 + first - 1, logs)
    assert later is not None and set(later.sent) == {B}
    again = state.build_fetch(100 + first, logs)
    assert again is not None and set(again.sent) == {A, B}


def test_a_leader_behind_on_metadata_is_asked_again_soon_then_less_often() -> None:
    """A new topic's follower often asks before its leader knows it leads: the
    backoff starts short and doubles up to replica.fetch.backoff.ms; records
    from the leader start it over.  Other errors wait the whole backoff."""
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]))
    state = fetcher(logs)
    now, waits = 0, []
    for code in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        *[ErrorCode.NOT_LEADER_OR_FOLLOWER] * 8,
    ):
        plan = state.build_fetch(now, logs)
        assert plan is not None
        state.handle_fetch_response(plan, response((A, {"error_code": code})), now, logs)
        wake = state.next_wakeup_ms(now)
        assert wake is not None
        waits.append(wake - now)
        now = wake
    first = LEADER_BEHIND_FIRST_BACKOFF_MS
    assert waits == [min(first << i, BACKOFF) for i in range(10)]
    assert waits[-1] == BACKOFF
    plan = state.build_fetch(now, logs)
    assert plan is not None
    state.handle_fetch_response(plan, response((A, {"records": b"r"})), now, logs)
    plan = state.build_fetch(now, logs)
    assert plan is not None
    state.handle_fetch_response(
        plan, response((A, {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION})), now, logs
    )
    assert state.next_wakeup_ms(now) == now + first
    plan = state.build_fetch(now + first, logs)
    assert plan is not None
    state.handle_fetch_response(
        plan, response((A, {"error_code": ErrorCode.CORRUPT_MESSAGE})), now + first, logs
    )
    assert state.next_wakeup_ms(now + first) == now + first + BACKOFF


def test_failed_request_backs_off_the_leader() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    state.handle_request_failure(0)
    assert state.next_wakeup_ms(1) == BACKOFF
    assert state.build_fetch(BACKOFF - 1, logs) is None
    retry = state.build_fetch(BACKOFF, logs)
    assert retry is not None and retry.sent == plan.sent
    assert retry.body["session_epoch"] == plan.body["session_epoch"]  # a full request again


def test_stale_response_is_ignored() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    state.add_partitions({A: InitialFetchState(1, 6, 0)}, logs)  # new epoch meanwhile
    assert state.handle_fetch_response(plan, response((A, {"records": b"x"})), 0, logs) == []
    state.remove_partitions([A])
    assert state.handle_fetch_response(plan, response((A, {"records": b"x"})), 0, logs) == []


def test_partitions_that_got_data_go_to_the_back_of_the_queue() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]), b=FakeLog(end=1, epochs=[(5, 0)]))
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None and state.partitions() == [A, B]
    state.handle_fetch_response(plan, response((A, {"records": b"x"})), 0, logs)
    assert state.partitions() == [B, A]


def test_log_without_epochs_truncates_to_its_high_watermark_first() -> None:
    logs = FakeLogs(a=FakeLog(end=9))  # e.g. data from before leader epochs
    state = FetcherState(2, 1, CONFIG)
    state.add_partitions({A: InitialFetchState(1, 5, 6)}, logs)
    assert state.state(A).status is FetchStatus.TRUNCATING
    assert state.build_fetch(0, logs) is None
    assert state.truncate_without_epochs(logs) == [TruncateTo(A, 6)]
    logs.logs[A].end = 6
    assert state.build_fetch(0, logs) is not None


def test_offset_for_leader_epoch_path_when_truncation_on_fetch_is_off() -> None:
    config = ReplicationConfig(truncate_on_fetch=False, replica_fetch_backoff_ms=BACKOFF)
    logs = FakeLogs(a=FakeLog(end=12, epochs=[(1, 0), (4, 8)]))
    state = fetcher(logs, config)
    assert state.build_fetch(0, logs) is None
    plan = state.build_epoch_request(0, logs)
    assert plan is not None
    assert plan.body["topics"] == [
        {
            "topic": "a",
            "partitions": [{"partition": 0, "current_leader_epoch": 5, "leader_epoch": 4}],
        }
    ]
    answer: dict[str, Any] = {
        "topics": [
            {
                "topic": "a",
                "partitions": [
                    {"error_code": 0, "partition": 0, "leader_epoch": 3, "end_offset": 10}
                ],
            }
        ]
    }
    # The leader's largest epoch <= 4 is 3, which we never had: step back to epoch 1's end.
    assert state.handle_epoch_response(plan, answer, 0, logs) == [TruncateTo(A, 8)]
    assert state.state(A).status is FetchStatus.TRUNCATING
    logs.logs[A].end = 8
    logs.logs[A].epochs = [(1, 0)]
    plan = state.build_epoch_request(0, logs)
    assert plan is not None and plan.sent == {A: (1, 5)}
    answer["topics"][0]["partitions"][0].update(leader_epoch=1, end_offset=5)
    assert state.handle_epoch_response(plan, answer, 0, logs) == [TruncateTo(A, 5)]
    assert state.state(A).status is FetchStatus.FETCHING
    logs.logs[A].end = 5
    fetch = state.build_fetch(0, logs)
    assert fetch is not None
    assert fetch.body["topics"][0]["partitions"][0]["last_fetched_epoch"] == -1


def test_storage_failure_pauses_other_action_failures_back_off() -> None:
    logs = FakeLogs(a=FakeLog(end=4, epochs=[(5, 0)]), b=FakeLog(end=4, epochs=[(5, 0)]))
    state = fetcher(logs)
    state.action_failed(AppendRecords(A, b"", 0, 0), ErrorCode.KAFKA_STORAGE_ERROR, 0)
    state.action_failed(AppendRecords(B, b"", 0, 0), ErrorCode.CORRUPT_MESSAGE, 0)
    assert state.state(A).status is FetchStatus.FAILED
    assert state.state(B).delayed_until_ms == BACKOFF
