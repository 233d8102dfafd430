"""The remote tier's byte-rate quotas, on a clock the test moves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.tiered.partition_log import TIP, Log, MetadataTopic

from samsa.tiered.copy_task import RemoteLogCopyTask
from samsa.tiered.metadata import EpochEntry
from samsa.tiered.quota import UNLIMITED, RateQuota
from samsa.tiered.segment_objects import RemoteStorageManager
from samsa.tiered.store import FileSystemRemoteStore


def test_the_rate_is_measured_over_the_windows() -> None:
    quota = RateQuota(1000, samples=11, window_s=1.0)
    quota.record(5000, now_ms=0)
    # One burst counts over at least ten windows: 500 B/s, under the bound.
    assert quota.rate(0) == pytest.approx(500)
    assert quota.throttle_time_ms(0) == 0
    quota.record(10_000, now_ms=500)
    # 15,000 B over 10 s is 1,500 B/s: half again the bound, for 10 s -> wait 5 s.
    assert quota.throttle_time_ms(500) == 5000
    # Windows older than 11 s are forgotten.
    assert quota.rate(12_500) == 0 and quota.throttle_time_ms(12_500) == 0


def test_unlimited_and_invalid_bounds() -> None:
    quota = RateQuota(UNLIMITED)
    quota.record(10**15, now_ms=0)
    assert quota.throttle_time_ms(0) == 0
    with pytest.raises(ValueError):
        RateQuota(0)
    with pytest.raises(ValueError):
        quota.update(-1)
    quota.update(1)
    assert quota.throttle_time_ms(0) > 0


def test_the_copy_task_waits_while_over_the_quota(tmp_path: Path) -> None:
    log = Log(tmp_path / "log", [EpochEntry(0, 0)])
    log.roll(5), log.roll(5), log.roll(1)
    store = FileSystemRemoteStore(tmp_path / "remote")
    quota = RateQuota(1)

    async def scenario() -> int:
        quota.record(
            10**9, int(asyncio.get_running_loop().time() * 1000)
        )  # other partitions' copies
        task = RemoteLogCopyTask(
            log,
            MetadataTopic().manager(),
            RemoteStorageManager(store),
            broker_id=1,
            wall_clock_ms=lambda: 0,
            quota=quota,
        )
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(task.run_once(), 0.5)
        quota.update(UNLIMITED)
        return await task.run_once()

    assert asyncio.run(scenario()) == 2
    assert log.highest_remote == log.segments[1].end_offset
    assert TIP.topic in {o.key.split("-")[0] for o in asyncio.run(store.list_objects(""))}
