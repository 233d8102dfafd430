"""The driver flushes the metadata log in a thread: the loop serves others while
the disk takes its time, and an append counts only once flushed."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from tests.raft.helpers import make_machine

from samsa.raft import MemoryRaftLog
from samsa.raft.driver import RaftDriver
from samsa.raft.persistence.raft_log import Snapshot


class SlowDisk(MemoryRaftLog):
    """A log whose fsync waits until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__()
        self.may_finish = threading.Event()
        self.flushing_in: list[str] = []

    def flush(self, up_to_offset: int) -> None:
        self.flushing_in.append(threading.current_thread().name)
        assert self.may_finish.wait(10)
        super().flush(up_to_offset)


class Commits:
    def __init__(self) -> None:
        self.high_watermarks: list[int] = []

    def handle_commit(self, high_watermark: int) -> None:
        self.high_watermarks.append(high_watermark)

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        raise AssertionError("no snapshot here")

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        pass


async def nothing_to_send(*_: Any) -> dict[str, Any]:
    raise AssertionError("a quorum of one sends nothing")


def test_the_loop_runs_while_the_log_is_flushed(tmp_path: Path) -> None:
    async def scenario() -> None:
        disk = SlowDisk()
        commits = Commits()
        driver = RaftDriver(
            make_machine(1, (1,), log=disk),
            disk,
            tmp_path,
            nothing_to_send,
            commits,
            cluster_id="c",
            listener_name="CONTROLLER",
        )
        driver.start()
        for _ in range(20):  # the start's flush is under way, the loop runs on
            await asyncio.sleep(0)
        assert disk.flushing_in and disk.flushing_in[0] != threading.main_thread().name
        assert commits.high_watermarks == []  # not flushed: not committed
        disk.may_finish.set()
        async with asyncio.timeout(10):
            while not commits.high_watermarks:
                await asyncio.sleep(0.01)
        last = driver.append([b"record"])
        async with asyncio.timeout(10):
            while commits.high_watermarks[-1] <= last:
                await asyncio.sleep(0.01)
        await driver.stop()

    asyncio.run(scenario())
