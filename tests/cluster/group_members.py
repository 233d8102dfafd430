"""A librdkafka group member that commits what it consumes, and the samples of
a group's committed offsets that show whether one ever went backwards.

A commit a coordinator acknowledged but did not replicate shows up, after the
coordinator moves, as a committed offset that steps back: ``CommittedOffsets``
samples them (OffsetFetch through Admin) all along a fault run to catch that.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

from confluent_kafka import Consumer, KafkaException, TopicPartition
from tests.cluster.helpers import admin
from tests.cluster.workload import where


class Member(threading.Thread):
    """One group member: consume, then commit synchronously what it consumed."""

    def __init__(
        self, name: str, bootstrap: str, topic: str, group: str, protocol: str = "classic"
    ) -> None:
        super().__init__(name=f"member-{name}", daemon=True)
        self.protocol = protocol
        self.member_name = name
        self.topic = topic
        self.group = group
        self.bootstrap = bootstrap
        self.lock = threading.Lock()
        self.consumed: defaultdict[int, set[int]] = defaultdict(set)
        self.count = 0
        self.commits_ok: list[float] = []
        self.commit_errors: list[tuple[float, str]] = []
        self.assigned: set[int] = set()
        self.crashed: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        # KIP-848 members take session and heartbeat settings from the broker.
        timing = (
            {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
            if self.protocol == "classic"
            else {"group.protocol": "consumer"}
        )
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": self.group,
                "client.id": self.member_name,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                **timing,
                "socket.timeout.ms": 5000,
                "fetch.wait.max.ms": 100,
                "reconnect.backoff.ms": 50,
                "reconnect.backoff.max.ms": 500,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )

        # Incremental: KIP-848 members are given and asked for partitions a few at a time.
        def on_assign(_: Consumer, partitions: list[TopicPartition]) -> None:
            with self.lock:
                self.assigned |= {p.partition for p in partitions}

        def on_revoke(_: Consumer, partitions: list[TopicPartition]) -> None:
            with self.lock:
                self.assigned -= {p.partition for p in partitions}

        try:
            consumer.subscribe([self.topic], on_assign=on_assign, on_revoke=on_revoke)
            while not self._halt.is_set():
                batch = [m for m in consumer.consume(200, 0.2) if not m.error()]
                if not batch:
                    continue
                with self.lock:
                    for message in batch:
                        partition, offset, _ = where(message)
                        self.consumed[partition].add(offset)
                    self.count += len(batch)
                try:
                    consumer.commit(asynchronous=False)
                    with self.lock:
                        self.commits_ok.append(time.monotonic())
                except KafkaException as exc:
                    with self.lock:
                        self.commit_errors.append((time.monotonic(), str(exc)))
        except BaseException as exc:
            self.crashed = exc
        finally:
            consumer.close()

    def progress(self) -> tuple[int, int]:
        """(records consumed, commits that succeeded) so far."""
        with self.lock:
            return self.count, len(self.commits_ok)

    def stop(self) -> None:
        self._halt.set()
        self.join(30)
        if self.crashed is not None:
            raise AssertionError(f"member {self.member_name} crashed") from self.crashed


class CommittedOffsets:
    """Samples of the group's committed offsets (OffsetFetch through Admin)."""

    def __init__(self, topic: str, group: str) -> None:
        self.topic = topic
        self.group = group
        self.samples: list[tuple[float, dict[int, int]]] = []

    def sample(self, bootstrap: str) -> dict[int, int]:
        with admin(bootstrap) as client:
            found = client.list_consumer_group_offsets(self.group, timeout=5)
        offsets = {
            tp.partition: meta.offset for tp, meta in found.items() if tp.topic == self.topic
        }
        self.samples.append((time.monotonic(), offsets))
        return offsets

    def steps_back(self) -> list[str]:
        """Every partition whose committed offset was ever seen to decrease."""
        out: list[str] = []
        latest: dict[int, tuple[float, int]] = {}
        for when, offsets in self.samples:
            for partition, offset in sorted(offsets.items()):
                if partition in latest and offset < latest[partition][1]:
                    out.append(
                        f"partition {partition}: {latest[partition][1]} at {latest[partition][0]:.2f}"
                        f" then {offset} at {when:.2f}"
                    )
                latest[partition] = (when, max(offset, latest.get(partition, (0, -1))[1]))
        return out
