"""Consumer groups with aiokafka against a real Samsa broker.

Membership scenarios run for every client in ``test_groups_membership``;
committed-offset durability is checked here with aiokafka's own
commit/committed calls across a clean broker restart and a broker SIGKILL.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition

from samsa.testing import BrokerProcess

from .test_groups_common import (
    create_topic,
    produce,
)


def _consumer(bootstrap: str, group: str) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        session_timeout_ms=6000,
        heartbeat_interval_ms=200,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )


async def _committed(bootstrap: str, group: str, topic: str) -> dict[int, int | None]:
    consumer = _consumer(bootstrap, group)
    await consumer.start()
    try:
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in (0, 1)}
    finally:
        await consumer.stop()


async def _first_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """Subscribe as a new member and note where consumption resumes per partition."""
    consumer = _consumer(bootstrap, group)
    await consumer.start()
    consumer.subscribe([topic])
    first: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 20
        while len(first) < 2 and time.monotonic() < deadline:
            for tp, records in (await consumer.getmany(timeout_ms=100)).items():
                first.setdefault(tp.partition, records[0].offset)
        return first
    finally:
        await consumer.stop()


async def _commit_as_member(
    bootstrap: str, group: str, topic: str, offsets: dict[int, int]
) -> None:
    """Join the group by subscribing, wait for records, then commit synchronously."""
    consumer = _consumer(bootstrap, group)
    await consumer.start()
    consumer.subscribe([topic])
    try:
        deadline = time.monotonic() + 20
        seen: set[int] = set()
        while len(seen) < 2 and time.monotonic() < deadline:
            seen.update(tp.partition for tp in await consumer.getmany(timeout_ms=50))
        assert seen == {0, 1}
        await consumer.commit({TopicPartition(topic, p): o for p, o in offsets.items()})
    finally:
        await consumer.stop()


def test_committed_offsets_survive_restart_and_crash(tmp_path: Path) -> None:
    proc = BrokerProcess(tmp_path / "data")
    bootstrap = proc.start()
    try:
        topic, group = "durable", "durable-g"
        create_topic(bootstrap, topic, 2)
        produce(bootstrap, topic, per_partition=10, partitions=2)

        asyncio.run(_commit_as_member(bootstrap, group, topic, {0: 3, 1: 5}))
        assert asyncio.run(_committed(bootstrap, group, topic)) == {0: 3, 1: 5}

        assert proc.stop() == 0
        proc.start()
        assert asyncio.run(_committed(bootstrap, group, topic)) == {0: 3, 1: 5}
        asyncio.run(_commit_as_member(bootstrap, group, topic, {0: 7}))

        proc.kill()
        proc.start()
        assert asyncio.run(_committed(bootstrap, group, topic)) == {0: 7, 1: 5}
        assert asyncio.run(_first_offsets(bootstrap, group, topic)) == {0: 7, 1: 5}
    finally:
        proc.kill()
