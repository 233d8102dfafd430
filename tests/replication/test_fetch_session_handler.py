"""A follower's side of an incremental fetch session: what each request names, and recovery."""

from __future__ import annotations

from tests.replication.test_fetcher_state import A, B, FakeLog, FakeLogs, fetcher, response

from samsa.errors import ErrorCode
from samsa.replication.fetcher.session_handler import FetchSessionHandler
from samsa.replication.fetcher.state import FULL_RECHECK_MS

SESSION = 77


def named(body: dict) -> set[tuple[str, int]]:
    return {(t["topic"], p["partition"]) for t in body["topics"] for p in t["partitions"]}


def forgotten(body: dict) -> set[tuple[str, int]]:
    return {(t["topic"], p) for t in body["forgotten_topics_data"] for p in t["partitions"]}


def established(logs: FakeLogs):
    state = fetcher(logs)
    plan = state.build_fetch(0, logs)
    assert plan is not None
    assert plan.body["session_id"] == 0 and plan.body["session_epoch"] == 0
    assert named(plan.body) == {A, B}
    state.handle_fetch_response(
        plan, {**response((A, {}), (B, {})), "session_id": SESSION}, 0, logs
    )
    return state


def test_after_a_full_fetch_only_changed_partitions_are_named() -> None:
    logs = FakeLogs(a=FakeLog(end=7, epochs=[(3, 0)]), b=FakeLog(end=4, epochs=[(3, 0)]))
    state = established(logs)
    idle = state.build_fetch(1, logs)
    assert idle is not None
    assert (idle.body["session_id"], idle.body["session_epoch"]) == (SESSION, 1)
    assert named(idle.body) == set() and forgotten(idle.body) == set()
    assert set(idle.sent) == {A, B}  # the leader still reads both
    # An incremental answer without B leaves B alone; A got records and moves on.
    state.handle_fetch_response(
        idle, {**response((A, {"records": b"x"})), "session_id": SESSION}, 1, logs
    )
    logs.logs[A].end = 9
    moved = state.build_fetch(2, logs)
    assert moved is not None
    assert moved.body["session_epoch"] == 2 and named(moved.body) == {A}
    assert moved.body["topics"][0]["partitions"][0]["fetch_offset"] == 9


def test_partitions_that_stop_fetching_are_forgotten() -> None:
    logs = FakeLogs(a=FakeLog(end=7, epochs=[(3, 0)]), b=FakeLog(end=4, epochs=[(3, 0)]))
    state = established(logs)
    state.remove_partitions([B])
    plan = state.build_fetch(1, logs)
    assert plan is not None and forgotten(plan.body) == {B} and named(plan.body) == set()


def test_session_errors_send_everything_again_without_backing_off() -> None:
    logs = FakeLogs(a=FakeLog(end=7, epochs=[(3, 0)]), b=FakeLog(end=4, epochs=[(3, 0)]))
    state = established(logs)
    plan = state.build_fetch(1, logs)
    assert plan is not None
    lost = {"error_code": ErrorCode.FETCH_SESSION_ID_NOT_FOUND, "session_id": 0, "responses": []}
    assert state.handle_fetch_response(plan, lost, 1, logs) == []
    again = state.build_fetch(1, logs)  # at once: no backoff
    assert again is not None
    assert (again.body["session_id"], again.body["session_epoch"]) == (0, 0)
    assert named(again.body) == {A, B}


def test_a_bad_epoch_or_a_failed_request_closes_the_session_with_a_full_request() -> None:
    handler = FetchSessionHandler()
    handler.build({A: {"fetch_offset": 1}})
    assert handler.handle_response({"error_code": 0, "session_id": SESSION})
    assert handler.build({A: {"fetch_offset": 1}})[:2] == (SESSION, 1)
    assert not handler.handle_response(
        {"error_code": ErrorCode.INVALID_FETCH_SESSION_EPOCH, "session_id": 0}
    )
    session_id, epoch, changed, _ = handler.build({A: {"fetch_offset": 1}})
    assert (session_id, epoch, set(changed)) == (SESSION, 0, {A})  # closes SESSION, opens anew
    assert handler.handle_response({"error_code": 0, "session_id": SESSION + 1})
    handler.build({A: {"fetch_offset": 1}})
    handler.handle_error()
    assert handler.build({A: {"fetch_offset": 1}})[:2] == (SESSION + 1, 0)


def test_a_sessionless_leader_gets_full_requests() -> None:
    handler = FetchSessionHandler()
    for _ in range(3):
        session_id, epoch, changed, _ = handler.build({A: {"fetch_offset": 1}})
        assert (session_id, epoch, set(changed)) == (0, 0, {A})
        assert handler.handle_response({"error_code": 0, "session_id": 0})


class CountingLogs(FakeLogs):
    """FakeLogs that count which partitions' offsets a request was built from."""

    def __init__(self, **logs: FakeLog) -> None:
        super().__init__(**logs)
        self.read: list[tuple[str, int]] = []

    def log_end_offset(self, tp: tuple[str, int]) -> int:
        self.read.append(tp)
        return super().log_end_offset(tp)


def test_an_idle_request_reads_no_log_and_a_retention_move_is_named_within_the_recheck() -> None:
    """Building a request works out again only the partitions that may have
    changed: none when idle, the answered ones after a response, and every
    one each FULL_RECHECK_MS, which is how a log start moved by retention
    reaches the leader."""
    logs = CountingLogs(a=FakeLog(end=7, epochs=[(3, 0)]), b=FakeLog(end=4, epochs=[(3, 0)]))
    state = established(logs)
    logs.read.clear()
    first = state.build_fetch(1, logs)  # both were answered: worked out again
    assert first is not None and sorted(logs.read) == [A, B] and named(first.body) == set()
    state.handle_fetch_response(first, {**response(), "session_id": SESSION}, 1, logs)
    logs.read.clear()
    idle = state.build_fetch(1, logs)
    assert idle is not None and logs.read == [] and named(idle.body) == set()
    assert idle.sent == {A: (7, 5), B: (4, 5)}  # the leader still reads both

    state.handle_fetch_response(
        idle, {**response((A, {"records": b"x"})), "session_id": SESSION}, 1, logs
    )
    logs.logs[A].end = 9  # the append the response led to
    logs.read.clear()
    moved = state.build_fetch(2, logs)
    assert moved is not None and logs.read == [A] and named(moved.body) == {A}
    state.handle_fetch_response(moved, {**response(), "session_id": SESSION}, 2, logs)

    logs.logs[B].start = 3  # retention, behind the fetcher's back
    logs.read.clear()
    quiet = state.build_fetch(FULL_RECHECK_MS - 1, logs)
    assert quiet is not None and logs.read == [] and named(quiet.body) == set()
    state.handle_fetch_response(quiet, {**response(), "session_id": SESSION}, 3, logs)
    rechecked = state.build_fetch(FULL_RECHECK_MS, logs)
    assert rechecked is not None and sorted(logs.read) == [A, B]
    assert named(rechecked.body) == {B}
    assert rechecked.body["topics"][0]["partitions"][0]["log_start_offset"] == 3
