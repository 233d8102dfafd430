"""The metadata manager: publish returns once its event is applied; replay is the only way in;
every wait on the replay is bounded."""

from __future__ import annotations

import asyncio

from samsa.controller.image.metadata_image import MetadataImage
from samsa.net import ChannelPool
from samsa.replication.tiering.metadata_topic import (
    MetadataNotReadyError,
    MetadataTopic,
    MetadataTopicSettings,
)
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    TopicIdPartition,
    encode_remote_log_metadata,
)
from samsa.tiered.metadata.manager import RemoteLogMetadataManager

TIP = TopicIdPartition(b"\x09" * 16, "t", 2)


def _segment() -> RemoteLogSegmentMetadata:
    return RemoteLogSegmentMetadata(
        RemoteLogSegmentId.generate_new(TIP), 0, 9, 0, 1, 0, 10, (EpochEntry(0, 0),)
    )


def test_publish_waits_until_the_record_is_replayed() -> None:
    async def scenario() -> None:
        log: list[tuple[int, bytes]] = []

        async def produce(partition: int, value: bytes) -> int:
            log.append((partition, value))
            return len(log) - 1

        manager = RemoteLogMetadataManager(produce, partitions=5)
        manager.load_partition(TIP)
        manager.mark_initialized(TIP)
        segment = _segment()
        publishing = asyncio.create_task(manager.publish(segment))
        await asyncio.sleep(0.01)
        assert not publishing.done()  # durable in the topic, not yet applied here
        partition, value = log[0]
        assert partition == manager.metadata_partition(TIP)
        await manager.apply_record(partition, 0, value)
        await asyncio.wait_for(publishing, 5)
        cache = manager.cache(TIP)
        assert cache is not None and cache.get(segment.segment_id) == segment

    asyncio.run(scenario())


def test_replay_skips_what_it_applied_and_what_does_not_decode() -> None:
    async def scenario() -> None:
        async def produce(partition: int, value: bytes) -> int:
            raise AssertionError("nothing is published here")

        manager = RemoteLogMetadataManager(produce, partitions=1)
        cache = manager.load_partition(TIP)
        segment = _segment()
        await manager.apply_record(0, 0, encode_remote_log_metadata(segment))
        await manager.apply_record(0, 1, b"\x01\x63\x00")  # unknown api key: logged, skipped
        await manager.apply_record(0, 2, None)  # a tombstone: nothing to apply
        await manager.apply_record(0, 0, encode_remote_log_metadata(segment))  # an overlap
        assert manager.applied_offset(0) == 3
        assert len(cache) == 1
        assert not manager.is_ready(TIP)
        manager.mark_initialized(TIP)
        assert manager.is_ready(TIP)

    asyncio.run(scenario())


def test_a_load_that_cannot_finish_says_where_it_is_stuck() -> None:
    """``__remote_log_metadata`` cannot be created (no controller answers): the
    load of a partition's metadata gives up after its bound with a message
    naming what is missing, instead of waiting for ever."""

    async def scenario() -> None:
        image = MetadataImage()
        never = asyncio.Event()

        async def create_topic(name: str, partitions: int, rf: int, configs: object) -> None:
            await never.wait()  # the controller does not answer

        topic = MetadataTopic(
            node_id=1,
            replicas=None,
            image=lambda: image,
            create_topic=create_topic,
            wait_for_image=never.wait,
            channels=ChannelPool(client_id="test"),
            settings=MetadataTopicSettings(partitions=3, initialization_timeout_ms=100),
        )
        started = asyncio.get_running_loop().time()
        try:
            await topic.load(TIP)
        except MetadataNotReadyError as exc:
            message = str(exc)
        else:
            raise AssertionError("the load finished without a metadata topic")
        assert asyncio.get_running_loop().time() - started < 5
        assert "not replayed within 100 ms" in message
        assert "__remote_log_metadata does not exist yet" in message
        assert not topic.manager.is_ready(TIP)

    asyncio.run(scenario())
