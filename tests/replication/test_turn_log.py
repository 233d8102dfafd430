"""Per-partition lines of one loop turn: a few as they are, many summed up."""

from __future__ import annotations

import asyncio
import logging

import pytest

from samsa.replication.fetcher.manager import some_names
from samsa.replication.turn_log import NAMED, TurnLog

LOGGER = "samsa.test.turn_log"


def _turn(turn_log: TurnLog, kind: str, count: int) -> None:
    for i in range(count):
        turn_log.info(kind, "[t-%d] expanding ISR from %s to %s", i, [1], [1, 2])


def test_many_lines_of_one_turn_become_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    turn_log = TurnLog(logging.getLogger(LOGGER))

    async def main() -> None:
        _turn(turn_log, "expanding ISR", 25)
        assert caplog.records == []  # held until the turn ends
        await asyncio.sleep(0)

    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        asyncio.run(main())
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    debugs = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert infos == [
        "expanding ISR: 25 partitions (debug logging names each): "
        "[t-0] expanding ISR from [1] to [1, 2]; [t-1] expanding ISR from [1] to [1, 2]; "
        "[t-2] expanding ISR from [1] to [1, 2]; and 22 more"
    ]
    assert debugs == [f"[t-{i}] expanding ISR from [1] to [1, 2]" for i in range(25)]


def test_a_few_lines_and_each_turn_and_kind_stay_apart(caplog: pytest.LogCaptureFixture) -> None:
    turn_log = TurnLog(logging.getLogger(LOGGER))

    async def main() -> None:
        _turn(turn_log, "expanding ISR", NAMED)
        turn_log.info("ISR committed", "[t-0] ISR now %s", [1, 2])
        await asyncio.sleep(0)
        _turn(turn_log, "expanding ISR", NAMED)
        await asyncio.sleep(0)

    with caplog.at_level(logging.INFO, logger=LOGGER):
        asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records]
    one_turn = [f"[t-{i}] expanding ISR from [1] to [1, 2]" for i in range(NAMED)]
    assert lines == [*one_turn, "[t-0] ISR now [1, 2]", *one_turn]


def test_outside_a_loop_a_line_goes_out_at_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        TurnLog(logging.getLogger(LOGGER)).info("truncated", "[t-0] truncated to offset %d", 4)
    assert [r.getMessage() for r in caplog.records] == ["[t-0] truncated to offset 4"]


def test_nothing_is_held_when_info_is_off(caplog: pytest.LogCaptureFixture) -> None:
    turn_log = TurnLog(logging.getLogger(LOGGER))

    async def main() -> None:
        _turn(turn_log, "expanding ISR", 3)
        await asyncio.sleep(0)

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        asyncio.run(main())
    assert caplog.records == []


def test_a_fetchers_start_line_names_ten_partitions_and_counts_the_rest() -> None:
    assert some_names({("t", 1), ("t", 0)}) == "t-0, t-1"
    names = some_names({("t", i) for i in range(10_000)})
    assert names.endswith(" and 9990 more") and names.count(", ") == 9
