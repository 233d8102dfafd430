"""Describe/Alter/DeleteShareGroupOffsets (90-92) on the group coordinator.

A share group's "offset" per partition is its share partition's start offset,
kept in ``__share_group_state``; these read it, start it over (with the next
state epoch, which fences the leader's older state) or delete it.  Changing
offsets of a group that has members is refused with NON_EMPTY_GROUP, as Kafka
does: its members are reading from the current state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.connections.router import Body, Router
from samsa.server.coordinators.share_wiring import ShareStateService
from samsa.share.share_partition import RecordState, StateBatch

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

DESCRIBE, ALTER, DELETE = 90, 91, 92
NO_TOPIC_ID = b"\x00" * 16


def register(router: Router, broker: BrokerApi) -> None:
    router.register(DESCRIBE, lambda ctx, req: ShareOffsets(broker).describe(req))
    router.register(ALTER, lambda ctx, req: ShareOffsets(broker).alter(req))
    router.register(DELETE, lambda ctx, req: ShareOffsets(broker).delete(req))


class ShareOffsets:
    def __init__(self, broker: BrokerApi) -> None:
        self.broker = broker
        manager: Any = broker.share_partitions
        self.service: ShareStateService = manager.persister
        self.manager = manager

    def _group_error(self, group_id: str, *, must_be_empty: bool) -> tuple[ErrorCode, str] | None:
        error = self.broker.ensure_group_coordinator()
        if error is not None:
            return error, error.name
        coordinator = self.broker.groups
        error = coordinator.registry.check(group_id)
        if error is not None:
            return error, error.name
        group = coordinator.share.groups.get(group_id)
        if must_be_empty and group is not None and group.members:
            return ErrorCode.NON_EMPTY_GROUP, f"share group {group_id} has members"
        return None

    # ------------------------------------------------------------ describe

    async def describe(self, req: Body) -> Body:
        groups = []
        for g in req.get("groups") or ():
            group_id = g["group_id"]
            error = self._group_error(group_id, must_be_empty=False)
            if error is not None:
                groups.append(
                    {
                        "group_id": group_id,
                        "topics": [],
                        "error_code": int(error[0]),
                        "error_message": error[1],
                    }
                )
                continue
            wanted = g.get("topics")
            if wanted is None:
                group = self.broker.groups.share.groups.get(group_id)
                known = {} if group is None else group.read_topics
                wanted = [
                    {"topic_name": name, "partitions": list(range(count))}
                    for name, (_tid, count) in sorted(known.items())
                ]
            groups.append(
                {
                    "group_id": group_id,
                    "topics": [await self._describe_topic(group_id, t) for t in wanted],
                    "error_code": 0,
                    "error_message": None,
                }
            )
        return {"throttle_time_ms": 0, "groups": groups}

    def _lag(self, name: str, index: int, start_offset: int, batches: list[StateBatch]) -> int:
        """DescribeShareGroupOffsets v1 (KIP-1226): records from the start offset to
        the partition's high watermark not yet delivered for good (acknowledged or
        archived), as Kafka computes it; -1 where this broker does not lead the
        partition and so does not know its high watermark."""
        if not self.broker.leads(name, index):
            return -1
        partition = self.broker.replicas.get(name, index)
        if partition is None:
            return -1
        complete = sum(
            batch.last_offset - max(batch.first_offset, start_offset) + 1
            for batch in batches
            if batch.delivery_state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
            and batch.last_offset >= start_offset
        )
        return max(int(partition.high_watermark) - start_offset - complete, 0)

    async def _describe_topic(self, group_id: str, topic: Body) -> Body:
        name = topic["topic_name"]
        image_topic = self.broker.image.topics.get(name)
        partitions = []
        for index in topic["partitions"]:
            entry: Body = {
                "partition_index": index,
                "start_offset": -1,
                "leader_epoch": -1,
                "lag": -1,
                "error_code": 0,
                "error_message": None,
            }
            if image_topic is None or index not in image_topic.partitions:
                entry["error_code"] = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                try:
                    stored = await self.service.read(group_id, image_topic.topic_id, index, -1)
                except KafkaError as exc:
                    entry.update(error_code=int(exc.code), error_message=str(exc))
                    stored = None
                if stored is not None:
                    entry["start_offset"] = stored[1]
                    entry["leader_epoch"] = image_topic.partitions[index].leader_epoch
                    entry["lag"] = self._lag(name, index, stored[1], stored[2])
            partitions.append(entry)
        return {
            "topic_name": name,
            "topic_id": NO_TOPIC_ID if image_topic is None else image_topic.topic_id,
            "partitions": partitions,
        }

    # --------------------------------------------------------------- alter

    async def alter(self, req: Body) -> Body:
        group_id = req["group_id"]
        error = self._group_error(group_id, must_be_empty=True)
        if error is not None:
            return _refused(error, "responses")
        responses = []
        for topic in req.get("topics") or ():
            image_topic = self.broker.image.topics.get(topic["topic_name"])
            partitions = []
            for p in topic["partitions"]:
                entry: Body = {
                    "partition_index": p["partition_index"],
                    "error_code": 0,
                    "error_message": None,
                }
                if image_topic is None or p["partition_index"] not in image_topic.partitions:
                    entry["error_code"] = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                elif p["start_offset"] < 0:
                    entry["error_code"] = int(ErrorCode.INVALID_REQUEST)
                    entry["error_message"] = "the start offset must not be negative"
                else:
                    try:
                        await self.service.initialize(
                            group_id, image_topic.topic_id, p["partition_index"], p["start_offset"]
                        )
                        self.manager.forget(group_id, image_topic.topic_id, p["partition_index"])
                    except KafkaError as exc:
                        entry.update(error_code=int(exc.code), error_message=str(exc))
                partitions.append(entry)
            responses.append(
                {
                    "topic_name": topic["topic_name"],
                    "topic_id": NO_TOPIC_ID if image_topic is None else image_topic.topic_id,
                    "partitions": partitions,
                }
            )
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "responses": responses,
        }

    # -------------------------------------------------------------- delete

    async def delete(self, req: Body) -> Body:
        group_id = req["group_id"]
        error = self._group_error(group_id, must_be_empty=True)
        if error is not None:
            return _refused(error, "responses")
        responses = []
        for topic in req.get("topics") or ():
            image_topic = self.broker.image.topics.get(topic["topic_name"])
            entry: Body = {
                "topic_name": topic["topic_name"],
                "topic_id": NO_TOPIC_ID if image_topic is None else image_topic.topic_id,
                "error_code": 0,
                "error_message": None,
            }
            if image_topic is None:
                entry["error_code"] = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                try:
                    for index in sorted(image_topic.partitions):
                        await self.service.delete(group_id, image_topic.topic_id, index)
                        self.manager.forget(group_id, image_topic.topic_id, index)
                    group = self.broker.groups.share.groups.get(group_id)
                    if group is not None:
                        group.read_topics.pop(topic["topic_name"], None)
                except KafkaError as exc:
                    entry.update(error_code=int(exc.code), error_message=str(exc))
            responses.append(entry)
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "responses": responses,
        }


def _refused(error: tuple[ErrorCode, str], field: str) -> Body:
    return {
        "throttle_time_ms": 0,
        "error_code": int(error[0]),
        "error_message": error[1],
        field: [],
    }
