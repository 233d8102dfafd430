"""The partitions this broker hosts, and the fetches waiting for their data.

A fetch that cannot be answered yet (fewer than ``min_bytes`` available) parks a
``FetchWaiter`` on its partitions; every append tells the waiters of that
partition how many bytes arrived, and a waiter whose total reaches its minimum
wakes at once -- the response goes out the moment enough data is there, not
when ``max_wait_ms`` runs out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator

from samsa.replication.partition import Partition
from samsa.storage.log_config import LogConfig
from samsa.storage.log_manager import LogManager
from samsa.storage.producer_state import ProducerStateManager

TopicPartition = tuple[str, int]


class FetchWaiter:
    def __init__(self, needed_bytes: int) -> None:
        self.needed = needed_bytes
        self.future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_bytes(self, count: int) -> None:
        self.needed -= count
        if self.needed <= 0 and not self.future.done():
            self.future.set_result(None)

    def wake(self) -> None:
        if not self.future.done():
            self.future.set_result(None)


class ReplicaManager:
    def __init__(self, log_manager: LogManager, time_ms: Callable[[], int]) -> None:
        self.log_manager = log_manager
        self._time_ms = time_ms
        self._partitions: dict[TopicPartition, Partition] = {}
        self._waiters: dict[TopicPartition, set[FetchWaiter]] = {}

    def load_existing(self) -> None:
        """Wrap every log the log manager recovered, rebuilding producer state."""
        for (topic, index), log in self.log_manager.all_logs().items():
            self._add(topic, index, log)

    def _add(self, topic: str, index: int, log: object) -> Partition:
        from samsa.storage.log import Log

        assert isinstance(log, Log)
        state = ProducerStateManager(log.directory)
        replay_from = state.load(log.log_start_offset, log.log_end_offset)
        for header in log.iter_batch_headers(replay_from):
            state.replay_header(header)
        partition = Partition(topic, index, log, state, self._time_ms)
        partition.on_append = self._on_append
        self._partitions[(topic, index)] = partition
        return partition

    def create(self, topic: str, index: int, config: dict[str, str]) -> Partition:
        existing = self._partitions.get((topic, index))
        if existing is not None:
            return existing
        log = self.log_manager.create_log(topic, index, LogConfig.from_dict(config))
        return self._add(topic, index, log)

    def delete(self, topic: str, index: int) -> None:
        partition = self._partitions.pop((topic, index), None)
        if partition is not None:
            self.log_manager.delete_log(topic, index)
        for waiter in self._waiters.pop((topic, index), set()):
            waiter.wake()

    def get(self, topic: str, index: int) -> Partition | None:
        return self._partitions.get((topic, index))

    def partitions(self) -> Iterator[Partition]:
        return iter(list(self._partitions.values()))

    # ------------------------------------------------------------------ waiting fetches
    def park(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        for key in keys:
            self._waiters.setdefault(key, set()).add(waiter)

    def unpark(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        for key in keys:
            waiters = self._waiters.get(key)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[key]

    def parked_fetches(self) -> int:
        """Fetches waiting for data (Kafka's fetch purgatory size)."""
        waiting: set[FetchWaiter] = set()
        for waiters in self._waiters.values():
            waiting |= waiters
        return len(waiting)

    def _on_append(self, partition: Partition, size: int) -> None:
        waiters = self._waiters.get((partition.topic, partition.index))
        if waiters:
            for waiter in list(waiters):
                waiter.on_bytes(size)

    def snapshot_producer_state(self) -> None:
        for partition in self._partitions.values():
            partition.producer_state.take_snapshot(partition.log.log_end_offset)
