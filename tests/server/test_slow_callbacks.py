"""The measuring aid names the callback that held the loop, and only when asked."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from samsa.server.observability import slow_callbacks

HELD_S = 0.03


async def holds_the_loop() -> None:
    await asyncio.sleep(0)
    time.sleep(HELD_S)  # what a long synchronous pass does to the loop
    await asyncio.sleep(0)


def test_a_long_task_step_is_logged_with_where_it_ran(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(slow_callbacks.ENV_VAR, str(HELD_S * 1000 / 2))
    uninstall = slow_callbacks.install()
    assert uninstall is not None
    try:
        with caplog.at_level(logging.WARNING, slow_callbacks.__name__):
            asyncio.run(holds_the_loop())
    finally:
        uninstall()
    [held] = [r.getMessage() for r in caplog.records if "loop held" in r.getMessage()]
    assert "holds_the_loop" in held and "resumed from holds_the_loop" in held


def test_off_unless_the_environment_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(slow_callbacks.ENV_VAR, raising=False)
    untimed = asyncio.Handle._run
    assert slow_callbacks.install() is None
    assert asyncio.Handle._run is untimed
