"""CreateTopics a slice of partitions per step: the same records and answer as
in one piece, and the image untouched until the result is committed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tests.controller.harness import Cluster

from samsa.controller.steps import PARTITIONS_PER_STEP, run_through
from samsa.errors import ErrorCode
from samsa.eventloop.loop_slices import run_in_steps

PARTITIONS = 3 * PARTITIONS_PER_STEP + 7


def three_brokers() -> Cluster:
    c = Cluster(seed=11)
    c.start_brokers([1, 2, 3])
    return c


def request(*names: str, partitions: int = PARTITIONS) -> dict[str, Any]:
    topics = [
        {
            "name": name,
            "num_partitions": partitions,
            "replication_factor": 3,
            "assignments": [],
            "configs": [{"name": "retention.ms", "value": "1000"}],
        }
        for name in names
    ]
    return {"topics": topics, "timeout_ms": 1000, "validate_only": False}


def steps_checked(steps: Any, between: Callable[[], None]) -> tuple[Any, int]:
    """Drive ``steps`` to its result, calling ``between`` after each step; the
    result and how many steps it took."""
    taken = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value, taken
        taken += 1
        between()


def test_in_steps_gives_the_records_and_answer_of_one_piece() -> None:
    whole, stepped = three_brokers(), three_brokers()
    body = request("a", "b", "a")  # "a" twice: the second is refused
    expected = whole.controller.create_topics(body)

    def nothing_replayed() -> None:
        assert "a" not in stepped.image.topics

    result, taken = steps_checked(stepped.controller.create_topics_in_steps(body), nothing_replayed)
    assert taken >= 2 * (PARTITIONS // PARTITIONS_PER_STEP)
    assert result.atomic
    assert result.records == expected.records
    assert result.response == expected.response
    assert [t["error_code"] for t in result.response["topics"]][2] != 0
    stepped.commit(result)
    assert len(stepped.image.topics["a"].partitions) == PARTITIONS
    assert len(stepped.image.topics["b"].partitions) == PARTITIONS


def first_step_ends(steps: Any) -> Any:
    """The result of ``steps`` if it takes no step at all, else fail."""
    try:
        next(steps)
    except StopIteration as done:
        return done.value
    raise AssertionError("took a step")


def test_a_small_topic_takes_no_step_nor_does_a_refused_one() -> None:
    c = three_brokers()
    created = first_step_ends(c.controller.create_topics_in_steps(request("small", partitions=5)))
    [topic] = c.commit(created)["topics"]  # type: ignore[index]
    assert topic["error_code"] == 0 and topic["num_partitions"] == 5
    again = first_step_ends(c.controller.create_topics_in_steps(request("small")))
    [topic] = again.response["topics"]
    assert topic["error_code"] == ErrorCode.TOPIC_ALREADY_EXISTS and again.records == []
    assert run_through(c.controller.create_topics_in_steps(request("small"))).records == []


def test_the_loop_serves_others_between_steps() -> None:
    c = three_brokers()

    async def create() -> list[str]:
        events: list[str] = []
        loop = asyncio.get_running_loop()

        def request_waiting() -> None:
            events.append("served")

        loop.call_soon(request_waiting)
        result = await run_in_steps(c.controller.create_topics_in_steps(request("busy")))
        events.append(f"{len(result.records)} records")
        return events

    events = asyncio.run(create())
    assert events[0] == "served"  # before the last step, not after the whole
    assert events[-1] == f"{PARTITIONS + 2} records"


def test_create_partitions_in_steps_gives_the_records_and_answer_of_one_piece() -> None:
    whole, stepped = three_brokers(), three_brokers()
    for c in (whole, stepped):
        c.commit(c.controller.create_topics(request("grow", partitions=3)))
    body = {
        "topics": [{"name": "grow", "count": PARTITIONS, "assignments": None}],
        "timeout_ms": 1000,
        "validate_only": False,
    }
    expected = whole.controller.create_partitions(body)

    def nothing_replayed() -> None:
        assert len(stepped.image.topics["grow"].partitions) == 3

    result, taken = steps_checked(
        stepped.controller.create_partitions_in_steps(body), nothing_replayed
    )
    assert taken >= PARTITIONS // PARTITIONS_PER_STEP
    assert result.records == expected.records and result.response == expected.response
    stepped.commit(result)
    assert len(stepped.image.topics["grow"].partitions) == PARTITIONS
