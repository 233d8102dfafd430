"""Share sessions: epochs, and the sessions of consumers that died without closing them."""

from __future__ import annotations

import asyncio

import pytest

from samsa.errors import ErrorCode
from samsa.share.manager import SharePartitionManager, ShareSettings
from samsa.share.sessions import ShareSessionCache, ShareSessionError
from samsa.share.share_partition import RecordState, ShareLimits, StateBatch

T = b"t" * 16


def test_epochs_must_follow_each_other() -> None:
    cache = ShareSessionCache()
    with pytest.raises(ShareSessionError) as missing:
        cache.open_or_advance("g", "m", 1)
    assert missing.value.code is ErrorCode.SHARE_SESSION_NOT_FOUND
    cache.open_or_advance("g", "m", 0)
    cache.open_or_advance("g", "m", 1)
    with pytest.raises(ShareSessionError) as stale:
        cache.open_or_advance("g", "m", 1)
    assert stale.value.code is ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert cache.open_or_advance("g", "m", 2).epoch == 3


def test_an_idle_session_is_dropped_and_its_records_offered_again() -> None:
    manager = SharePartitionManager(
        ShareSettings(ShareLimits(lock_duration_ms=60_000), "earliest", session_idle_ms=1000)
    )
    share = asyncio.run(manager.ensure("g", (T, 0), 0, lambda: 0))
    dead = manager.open_session("g", "dead", 0, now_ms=0)
    dead.partitions.add((T, 0))
    share.acquire("dead", [(0, 9)], max_records=10, now_ms=0)
    manager.open_session("g", "alive", 0, now_ms=500)
    assert share.counts()[RecordState.ACQUIRED] == 10
    manager.open_session("g", "late", 0, now_ms=1500)
    assert ("g", "dead") not in manager.sessions.sessions
    assert ("g", "alive") in manager.sessions.sessions
    assert share.counts()[RecordState.AVAILABLE] == 10


class StalePersister:
    """Answers reads with a fixed state, as a share coordinator does while this
    leader's latest write is still on its way."""

    def __init__(self, state_epoch: int) -> None:
        self.state_epoch = state_epoch

    async def read(
        self, group_id: str, topic_id: bytes, partition: int, leader_epoch: int
    ) -> tuple[int, int, list[StateBatch]] | None:
        return self.state_epoch, 0, []

    async def write(self, *args: object, **kwargs: object) -> None:
        return None


def test_a_new_session_keeps_acknowledgements_whose_write_is_in_flight() -> None:
    persister = StalePersister(state_epoch=0)
    manager = SharePartitionManager(ShareSettings(), persister)
    share = asyncio.run(manager.ensure("g", (T, 0), 0, lambda: 0))
    share.acquire("a", [(0, 9)], max_records=10, now_ms=0)
    share.acknowledge("a", [(0, 9, [1])])
    asyncio.run(manager.revalidate("g", {(T, 0)}))
    assert manager.existing("g", (T, 0)) is share and share.start_offset == 10
    persister.state_epoch = 1  # the offsets were reset through another broker
    asyncio.run(manager.revalidate("g", {(T, 0)}))
    assert manager.existing("g", (T, 0)) is None
