"""The broker's fetch session cache (KIP-227), without a broker: contexts, filtering, eviction."""

from __future__ import annotations

import random
from typing import Any

from samsa.errors import ErrorCode
from samsa.server.fetch_sessions.cache import FetchContext, FetchSessionCache, next_epoch


def preq(partition: int, offset: int = 0) -> dict[str, Any]:
    return {"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1 << 20}


def request(session_id: int, epoch: int, parts: dict[str, list[dict[str, Any]]], forget=None):
    return {
        "session_id": session_id,
        "session_epoch": epoch,
        "topics": [{"topic": t, "partitions": p} for t, p in parts.items()],
        "forgotten_topics_data": [
            {"topic": t, "partitions": ps} for t, ps in (forget or {}).items()
        ],
    }


def answer(ctx: FetchContext, records: dict[tuple[str, int], bytes] | None = None, hw: int = 5):
    """What read_partitions would answer for the context's partitions."""
    records = records or {}
    return [
        {
            "topic": t["topic"],
            "partitions": [
                {
                    "partition_index": p["partition"],
                    "error_code": 0,
                    "high_watermark": hw,
                    "log_start_offset": 0,
                    "records": records.get((t["topic"], p["partition"])),
                }
                for p in t["partitions"]
            ],
        }
        for t in ctx.topics
    ]


def names(responses: list[dict[str, Any]]) -> set[tuple[str, int]]:
    return {(t["topic"], p["partition_index"]) for t in responses for p in t["partitions"]}


def open_session(cache: FetchSessionCache, *, now: int = 0, privileged: bool = False, n: int = 3):
    ctx = cache.new_context(
        request(0, 0, {"t": [preq(i) for i in range(n)]}), now, privileged=privileged
    )
    assert isinstance(ctx, FetchContext) and not ctx.incremental
    session_id, responses = ctx.finish(answer(ctx), now)
    assert names(responses) == {("t", i) for i in range(n)}
    return session_id


def test_full_fetch_opens_a_session_and_incremental_ones_answer_only_news() -> None:
    cache = FetchSessionCache(10, rng=random.Random(1))
    session_id = open_session(cache)
    assert session_id != 0 and len(cache) == 1

    # Nothing changed: an empty incremental request reads every partition, answers none.
    ctx = cache.new_context(request(session_id, 1, {}), 1, privileged=False)
    assert isinstance(ctx, FetchContext) and ctx.incremental
    assert len(ctx.topics[0]["partitions"]) == 3
    sid, responses = ctx.finish(answer(ctx), 1)
    assert sid == session_id and responses == []

    # New records on t-1, and a new high watermark everywhere at the next one.
    ctx = cache.new_context(request(session_id, 2, {"t": [preq(1, 5)]}), 2, privileged=False)
    assert isinstance(ctx, FetchContext)
    by_partition = {p["partition"]: p for p in ctx.topics[0]["partitions"]}
    assert by_partition[1]["fetch_offset"] == 5  # the request's new offset is read
    _, responses = ctx.finish(answer(ctx, {("t", 1): b"batch"}), 2)
    assert names(responses) == {("t", 1)}
    ctx = cache.new_context(request(session_id, 3, {}), 3, privileged=False)
    assert isinstance(ctx, FetchContext)
    _, responses = ctx.finish(answer(ctx, hw=9), 3)
    assert names(responses) == {("t", 0), ("t", 1), ("t", 2)}


def test_errors_are_always_answered_and_the_partition_again_once_they_clear() -> None:
    cache = FetchSessionCache(10)
    session_id = open_session(cache, n=1)
    ctx = cache.new_context(request(session_id, 1, {}), 1, privileged=False)
    assert isinstance(ctx, FetchContext)
    failing = answer(ctx)
    failing[0]["partitions"][0]["error_code"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert names(ctx.finish(failing, 1)[1]) == {("t", 0)}
    ctx = cache.new_context(request(session_id, 2, {}), 2, privileged=False)
    assert isinstance(ctx, FetchContext)
    assert names(ctx.finish(answer(ctx), 2)[1]) == {("t", 0)}


def test_forgotten_partitions_leave_the_session_and_new_ones_join() -> None:
    cache = FetchSessionCache(10)
    session_id = open_session(cache)
    req = request(session_id, 1, {"u": [preq(0)]}, forget={"t": [0, 2]})
    ctx = cache.new_context(req, 1, privileged=False)
    assert isinstance(ctx, FetchContext)
    assert names(answer(ctx)) == {("t", 1), ("u", 0)}
    # The new partition is answered (its high watermark is news), the old one is not.
    assert names(ctx.finish(answer(ctx), 1)[1]) == {("u", 0)}


def test_session_errors() -> None:
    cache = FetchSessionCache(10)
    session_id = open_session(cache)
    assert cache.new_context(request(session_id + 1, 1, {}), 0, privileged=False) is (
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    )
    assert cache.new_context(request(session_id, 7, {}), 0, privileged=False) is (
        ErrorCode.INVALID_FETCH_SESSION_EPOCH
    )
    # A full request naming the session closes it; epoch -1 opens none.
    ctx = cache.new_context(request(session_id, -1, {"t": [preq(0)]}), 0, privileged=False)
    assert isinstance(ctx, FetchContext)
    assert ctx.finish(answer(ctx), 0)[0] == 0 and len(cache) == 0


def test_zero_slots_turns_sessions_off() -> None:
    cache = FetchSessionCache(0)
    assert open_session(cache) == 0 and len(cache) == 0


def test_a_full_cache_evicts_stale_then_less_valuable_sessions_only() -> None:
    cache = FetchSessionCache(2, eviction_ms=1000)
    consumer = open_session(cache, now=0, n=3)
    follower = open_session(cache, now=0, privileged=True, n=3)
    # A small consumer session is worth less than both: not created.
    assert open_session(cache, now=10, n=1) == 0
    # A follower session evicts the consumer one at once.
    newer = open_session(cache, now=20, privileged=True, n=1)
    assert newer != 0 and cache.get(consumer) is None and cache.get(follower) is not None
    # Unused for longer than eviction_ms: any newcomer takes the stalest slot.
    ctx = cache.new_context(request(newer, 1, {}), 900, privileged=True)
    assert isinstance(ctx, FetchContext)
    assert open_session(cache, now=1500, n=1) != 0
    assert cache.get(follower) is None and cache.get(newer) is not None
    assert cache.evictions == 2


def test_epochs_wrap_to_one_never_zero() -> None:
    assert next_epoch(1) == 2 and next_epoch(0x7FFFFFFF) == 1


def test_a_partition_named_again_is_answered_even_without_news() -> None:
    """A follower whose partition changed while a fetch was out dropped that
    answer; naming the partition again gets it the high watermark again."""
    cache = FetchSessionCache(10)
    session_id = open_session(cache, n=2)
    ctx = cache.new_context(request(session_id, 1, {"t": [preq(1)]}), 1, privileged=True)
    assert isinstance(ctx, FetchContext)
    assert names(ctx.finish(answer(ctx), 1)[1]) == {("t", 1)}
