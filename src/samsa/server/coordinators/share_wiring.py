"""Wire share partitions to their durable state in ``__share_group_state``.

``ShareStateService`` is both ends of the share-state APIs on one broker: the
share coordinator for the ``__share_group_state`` partitions it leads, and the
persister its share-partition leaders use, which calls the coordinator of a
state partition in process when it is this broker and over the inter-broker
listener otherwise (ReadShareGroupState / WriteShareGroupState, as Kafka's
DefaultStatePersister does).  The topic is created on first use.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from samsa.coordinator.share.state import SHARE_STATE_TOPIC, ShareStateCoordinator
from samsa.errors import ErrorCode, KafkaError
from samsa.server.coordinators.group_wiring import LogOffsetsStore
from samsa.server.coordinators.txn_wiring import _channel_to
from samsa.share.share_partition import RecordState, StateBatch

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

log = logging.getLogger("samsa.server")

Body = dict[str, Any]
API_KEYS = {"initialize": 83, "read": 84, "write": 85, "delete": 86, "read_summary": 87}
REQUEST_TIMEOUT_MS = 15_000


class ShareStateService:
    def __init__(self, broker: BrokerApi) -> None:
        self.broker = broker
        self._coordinator: ShareStateCoordinator | None = None
        self._creating: asyncio.Lock = asyncio.Lock()

    async def coordinator(self) -> ShareStateCoordinator:
        """The share coordinator, creating ``__share_group_state`` the first time."""
        if self._coordinator is not None:
            return self._coordinator
        async with self._creating:
            if self._coordinator is None:
                await self._ensure_topic()
                broker = self.broker
                partitions = len(broker.image.topics[SHARE_STATE_TOPIC].partitions)

                def leader_epoch(index: int) -> int | None:
                    partition = broker.replicas.get(SHARE_STATE_TOPIC, index)
                    if partition is None or not broker.leads(SHARE_STATE_TOPIC, index):
                        return None
                    return int(partition.leader_epoch)

                self._coordinator = ShareStateCoordinator(
                    LogOffsetsStore(broker, SHARE_STATE_TOPIC, wait_for_replicas=True),
                    partitions,
                    leader_epoch,
                )
        return self._coordinator

    async def _ensure_topic(self) -> None:
        broker = self.broker
        if SHARE_STATE_TOPIC in broker.image.topics:
            return
        config = broker.config
        replication = min(
            int(config["share.coordinator.state.topic.replication.factor"]),
            max(1, len(broker.image.active_brokers())),
        )
        configs = {
            "cleanup.policy": "compact",
            "compression.type": "producer",
            "min.insync.replicas": str(
                min(int(config["share.coordinator.state.topic.min.isr"]), replication)
            ),
        }
        partitions = int(config["share.coordinator.state.topic.num.partitions"])
        await broker.create_internal_topic(SHARE_STATE_TOPIC, partitions, replication, configs)
        while SHARE_STATE_TOPIC not in broker.image.topics:
            await broker.loader.wait_applied(broker.loader.applied_offset)

    # ------------------------------------------------------------ persister

    async def read(
        self, group_id: str, topic_id: bytes, partition: int, leader_epoch: int
    ) -> tuple[int, int, list[StateBatch]] | None:
        """(state epoch, start offset, batches) of a share partition, None if it has none."""
        result = await self._call(
            "read", group_id, topic_id, {"partition": partition, "leader_epoch": leader_epoch}
        )
        code = ErrorCode(result["error_code"])
        if code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            return None
        if code is not ErrorCode.NONE:
            raise KafkaError(code, result.get("error_message") or code.name)
        batches = [
            StateBatch(
                b["first_offset"],
                b["last_offset"],
                RecordState(b["delivery_state"]),
                b["delivery_count"],
            )
            for b in result["state_batches"]
        ]
        return result["state_epoch"], result["start_offset"], batches

    async def write(
        self,
        group_id: str,
        topic_id: bytes,
        partition: int,
        *,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: list[StateBatch],
    ) -> None:
        body = {
            "partition": partition,
            "state_epoch": state_epoch,
            "leader_epoch": leader_epoch,
            "start_offset": start_offset,
            "state_batches": [
                {
                    "first_offset": b.first_offset,
                    "last_offset": b.last_offset,
                    "delivery_state": int(b.delivery_state),
                    "delivery_count": b.delivery_count,
                }
                for b in batches
            ],
        }
        self._check(await self._call("write", group_id, topic_id, body))

    async def initialize(
        self, group_id: str, topic_id: bytes, partition: int, start_offset: int
    ) -> None:
        """Start a share partition's state over at ``start_offset`` with the next state
        epoch, which fences writes of a leader still holding the older state."""
        stored = await self.read(group_id, topic_id, partition, -1)
        state_epoch = 0 if stored is None else stored[0] + 1
        body = {"partition": partition, "state_epoch": state_epoch, "start_offset": start_offset}
        self._check(await self._call("initialize", group_id, topic_id, body))

    async def delete(self, group_id: str, topic_id: bytes, partition: int) -> None:
        self._check(await self._call("delete", group_id, topic_id, {"partition": partition}))

    @staticmethod
    def _check(result: Body) -> None:
        code = ErrorCode(result["error_code"])
        if code is not ErrorCode.NONE:
            raise KafkaError(code, result.get("error_message") or code.name)

    async def _call(self, api: str, group_id: str, topic_id: bytes, partition: Body) -> Body:
        coordinator = await self.coordinator()
        index = coordinator.partition_for(group_id, topic_id, partition["partition"])
        request = {
            "group_id": group_id,
            "topics": [{"topic_id": topic_id, "partitions": [partition]}],
        }
        registration = self.broker.image.topics[SHARE_STATE_TOPIC].partitions.get(index)
        leader = -1 if registration is None else registration.leader
        if leader == self.broker.node_id:
            response = await coordinator.handle(api, request)
        else:
            channel = None if leader < 0 else _channel_to(self.broker, leader)
            if channel is None:
                raise KafkaError(
                    ErrorCode.COORDINATOR_NOT_AVAILABLE,
                    f"{SHARE_STATE_TOPIC}-{index} has no leader",
                )
            try:
                response = await channel.request(
                    API_KEYS[api], 0, request, timeout_ms=REQUEST_TIMEOUT_MS
                )
            except KafkaError:
                raise
            except Exception as exc:
                raise KafkaError(
                    ErrorCode.COORDINATOR_NOT_AVAILABLE, f"share coordinator {leader}: {exc}"
                ) from None
        result: Body = response["results"][0]["partitions"][0]
        return result
