"""The replica fetchers of this broker: Kafka's ReplicaFetcherManager.

Followed partitions are spread over ``num.replica.fetchers`` fetchers per
leader broker, picked by a stable hash of the partition (Kafka's
``getFetcherId``), so one leader's partitions share a few requests rather
than one each, and a slow partition holds up only its own fetcher's share.
A fetcher starts when it gets its first partition and stops when it has
none left.  Adding a partition that is already fetched elsewhere (its leader
or epoch changed) moves it.  Runs on the event loop.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping

from samsa.net import ChannelPool
from samsa.replication.config import ReplicationConfig
from samsa.replication.fetcher.replica_fetcher import FollowerReplicas, ReplicaFetcher
from samsa.replication.fetcher.state import FetcherState
from samsa.replication.fetcher.types import InitialFetchState, TopicPartition

log = logging.getLogger(__name__)

__all__ = ["ReplicaFetcherManager"]


class ReplicaFetcherManager:
    def __init__(
        self,
        replica_id: int,
        channels: ChannelPool,
        replicas: FollowerReplicas,
        config: ReplicationConfig,
        time_ms: Callable[[], int],
    ) -> None:
        self.replica_id = replica_id
        self.config = config
        self._channels = channels
        self._replicas = replicas
        self._time_ms = time_ms
        self._fetchers: dict[tuple[int, int], ReplicaFetcher] = {}
        self._fetcher_of: dict[TopicPartition, tuple[int, int]] = {}

    def fetcher_id(self, tp: TopicPartition) -> int:
        """Which of a leader's fetchers copies ``tp``: stable across restarts
        (zlib.crc32, not Python's salted ``hash``)."""
        return (zlib.crc32(tp[0].encode()) * 31 + tp[1]) % max(1, self.config.num_replica_fetchers)

    def add_partitions(self, initial: Mapping[TopicPartition, InitialFetchState]) -> None:
        self.remove_partitions(initial)
        grouped: dict[tuple[int, int], dict[TopicPartition, InitialFetchState]] = {}
        for tp, start in initial.items():
            grouped.setdefault((start.leader_id, self.fetcher_id(tp)), {})[tp] = start
        for key, partitions in grouped.items():
            fetcher = self._fetchers.get(key)
            if fetcher is None:
                leader_id, fetcher_id = key
                fetcher = ReplicaFetcher(
                    f"ReplicaFetcher-{fetcher_id}-{leader_id} (broker {self.replica_id})",
                    FetcherState(self.replica_id, leader_id, self.config),
                    self._channels,
                    self._replicas,
                    self._time_ms,
                )
                self._fetchers[key] = fetcher
                fetcher.start()
            fetcher.add_partitions(partitions)
            for tp in partitions:
                self._fetcher_of[tp] = key
            log.info(
                "fetching %d partitions from broker %d: %s",
                len(partitions),
                key[0],
                some_names(partitions),
            )

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> None:
        by_fetcher: dict[tuple[int, int], list[TopicPartition]] = {}
        for tp in tps:
            key = self._fetcher_of.pop(tp, None)
            if key is not None:
                by_fetcher.setdefault(key, []).append(tp)
        for key, removed in by_fetcher.items():
            fetcher = self._fetchers[key]
            fetcher.remove_partitions(removed)
            if len(fetcher) == 0:
                del self._fetchers[key]
                # Stopping awaits the task; removal must stay synchronous, so the
                # idle fetcher is cancelled and left to finish on its own.
                fetcher.start_stopping()

    def fetcher_for(self, tp: TopicPartition) -> ReplicaFetcher | None:
        key = self._fetcher_of.get(tp)
        return None if key is None else self._fetchers.get(key)

    def fetchers(self) -> list[ReplicaFetcher]:
        return list(self._fetchers.values())

    def partitions(self) -> list[TopicPartition]:
        return list(self._fetcher_of)

    async def stop(self) -> None:
        fetchers, self._fetchers = list(self._fetchers.values()), {}
        self._fetcher_of.clear()
        for fetcher in fetchers:
            await fetcher.stop()


NAMED = 10
"""Partitions a fetcher's start line names; at 10,000 the whole list was 200 KB."""


def some_names(partitions: Collection[TopicPartition]) -> str:
    names = sorted(f"{t}-{p}" for t, p in partitions)
    more = len(names) - NAMED
    return ", ".join(names[:NAMED]) + (f" and {more} more" if more > 0 else "")
