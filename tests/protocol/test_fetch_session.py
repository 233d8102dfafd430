"""The fetcher's side of a fetch session, driven against the broker's real session cache.

Whatever the fetcher wants from step to step, and whatever goes wrong in
between (a request or a response lost, the broker evicting the session, a
cache with no slots), the broker must read exactly the partitions the
fetcher wants at exactly its fetch offsets: that is what makes an
incremental request, which names only what changed, safe.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import ErrorCode
from samsa.protocol.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    NO_SESSION,
    FetchSessionHandler,
)
from samsa.server.fetch_sessions.cache import FetchSessionCache

Key = tuple[str, int]
FAULTS = ("none", "none", "none", "lost_request", "lost_response", "evicted")


def request(session_id: int, epoch: int, changed: dict[Key, Any], forgotten: list[Key]) -> dict:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, _), data in changed.items():
        topics.setdefault(topic, []).append(data)
    gone: dict[str, list[int]] = {}
    for topic, partition in forgotten:
        gone.setdefault(topic, []).append(partition)
    return {
        "session_id": session_id,
        "session_epoch": epoch,
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        "forgotten_topics_data": [{"topic": t, "partitions": ps} for t, ps in gone.items()],
    }


def wanted_of(offsets: dict[Key, int]) -> dict[Key, dict[str, Any]]:
    return {
        key: {"partition": key[1], "fetch_offset": offset, "partition_max_bytes": 1024}
        for key, offset in offsets.items()
    }


def read_by(topics: list[dict[str, Any]]) -> dict[Key, int]:
    return {
        (t["topic"], p["partition"]): p["fetch_offset"] for t in topics for p in t["partitions"]
    }


def answers(topics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "topic": t["topic"],
            "partitions": [
                {"partition_index": p["partition"], "error_code": 0, "high_watermark": 5}
                for p in t["partitions"]
            ],
        }
        for t in topics
    ]


keys = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 3))
steps = st.lists(
    st.tuples(st.dictionaries(keys, st.integers(0, 4), max_size=8), st.sampled_from(FAULTS)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150, deadline=None, database=None)
@given(steps=steps, slots=st.sampled_from([0, 1, 1000]))
def test_the_broker_always_reads_exactly_what_the_fetcher_wants(
    steps: list[tuple[dict[Key, int], str]], slots: int
) -> None:
    cache = FetchSessionCache(slots)
    handler = FetchSessionHandler[Key]()
    for now_ms, (offsets, fault) in enumerate(steps):
        session_id, epoch, changed, forgotten = handler.build(wanted_of(offsets))
        if fault == "lost_request":
            handler.handle_error()
            continue
        if fault == "evicted" and handler.session_id != NO_SESSION:
            cache.remove(handler.session_id)
        context = cache.new_context(
            request(session_id, epoch, changed, forgotten), now_ms, privileged=False
        )
        if isinstance(context, ErrorCode):
            assert epoch != INITIAL_EPOCH  # only an incremental request can miss its session
            assert not handler.handle_response({"error_code": context, "session_id": 0})
            assert handler.next_epoch == INITIAL_EPOCH
            continue
        assert read_by(context.topics) == offsets
        if epoch != INITIAL_EPOCH:
            assert set(changed) <= set(offsets)  # never more than the changes
        new_id, _ = context.finish(answers(context.topics), now_ms)
        if fault == "lost_response":
            handler.handle_error()
            continue
        assert handler.handle_response({"error_code": 0, "session_id": new_id})
        if slots == 0:
            assert handler.session_id == NO_SESSION and handler.next_epoch == INITIAL_EPOCH


def test_an_idle_session_sends_nothing_but_its_epoch() -> None:
    cache = FetchSessionCache()
    handler = FetchSessionHandler[Key]()
    wanted = wanted_of({("a", p): 7 for p in range(100)})
    _, epoch, changed, _ = handler.build(wanted)
    assert epoch == INITIAL_EPOCH and len(changed) == 100
    context = cache.new_context(request(0, epoch, changed, []), 0, privileged=False)
    assert not isinstance(context, ErrorCode)
    assert handler.handle_response({"error_code": 0, "session_id": context.finish([], 0)[0]})
    for expected_epoch in (1, 2, 3):
        session_id, epoch, changed, forgotten = handler.build(wanted)
        assert (epoch, changed, forgotten) == (expected_epoch, {}, [])
        assert handler.handle_response({"error_code": 0, "session_id": session_id})


def test_close_names_the_session_to_end_once_and_the_next_request_is_full() -> None:
    handler = FetchSessionHandler[Key]()
    assert handler.close() == NO_SESSION  # nothing opened yet
    handler.build(wanted_of({("a", 0): 1}))
    assert handler.handle_response({"error_code": 0, "session_id": 42})
    assert handler.close() == 42
    assert handler.close() == NO_SESSION
    session_id, epoch, changed, _ = handler.build(wanted_of({("a", 0): 1}))
    assert (session_id, epoch, list(changed)) == (NO_SESSION, INITIAL_EPOCH, [("a", 0)])
    assert FINAL_EPOCH == -1


def test_a_topic_id_error_closes_the_session_like_any_other_error() -> None:
    handler = FetchSessionHandler[Key]()
    handler.build(wanted_of({("a", 0): 1}))
    assert handler.handle_response({"error_code": 0, "session_id": 9})
    handler.build(wanted_of({("a", 0): 1}))
    assert not handler.handle_response(
        {"error_code": ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR, "session_id": 0}
    )
    assert handler.build(wanted_of({("a", 0): 1}))[:2] == (9, INITIAL_EPOCH)  # close 9, reopen


def test_close_after_a_failed_request_still_names_the_session_left_open() -> None:
    handler = FetchSessionHandler[Key]()
    handler.build(wanted_of({("a", 0): 1}))
    assert handler.handle_response({"error_code": 0, "session_id": 42})
    handler.build(wanted_of({("a", 0): 1}))
    handler.handle_error()  # the broker may still hold 42
    assert handler.close() == 42
