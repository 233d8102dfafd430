"""Several ReplicaManagers in one process, over real loopback sockets.

Each node has a data dir, a metadata image, a ReplicaManager with a ChannelPool,
and a tiny asyncio server that answers Fetch and OffsetForLeaderEpoch the way
the broker's handlers will: frame -> samsa.protocol decode -> the manager's
leader API -> encode -> frame, long-polling through the manager's fetch
purgatory.  A fake controller commits metadata records to every node's image
(through real MetadataDeltas, so ``apply_delta`` is what runs) and answers
AlterPartition by committing the ISR change.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import PartitionRegistration
from samsa.errors import DecodeError, ErrorCode
from samsa.net import ChannelPool
from samsa.protocol.api import decode_request, encode_response
from samsa.protocol.metadata_records import MetadataRecord, make_record
from samsa.replication import FetchWaiter, ReplicaManager, ReplicationConfig
from samsa.replication.partition import Partition
from samsa.storage.log_manager import LogManager
from samsa.storage.topic_config.log_config import LogConfig

FETCH = 1
OFFSET_FOR_LEADER_EPOCH = 23
TOPIC = "orders"
TOPIC_ID = uuid.uuid5(uuid.NAMESPACE_OID, TOPIC).bytes
_SIZE = struct.Struct(">i")


def wall_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class LeaderServer:
    """Answers Fetch / OffsetForLeaderEpoch for one node (see module doc)."""

    def __init__(self, replicas: ReplicaManager) -> None:
        self.replicas = replicas
        self.paused = False
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._connections):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while not self.paused:
                size = _SIZE.unpack(await reader.readexactly(4))[0]
                frame = memoryview(await reader.readexactly(size))
                header, body = decode_request(frame)
                if self.paused:
                    break
                if header.api_key == FETCH:
                    response = await self._fetch(body)
                elif header.api_key == OFFSET_FOR_LEADER_EPOCH:
                    response = self.replicas.offset_for_leader_epoch(body)
                else:
                    break
                chunks = encode_response(
                    header.api_key, header.api_version, header.correlation_id, response
                )
                writer.write(
                    b"".join(c if isinstance(c, bytes | bytearray) else bytes(c) for c in chunks)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, DecodeError):
            pass
        except asyncio.CancelledError:
            pass  # closing: end quietly (asyncio logs a cancelled connection task)
        finally:
            writer.close()
            self._connections.discard(task)

    def _read(self, body: dict[str, Any], update: bool) -> tuple[list[dict[str, Any]], int, bool]:
        replica_id = body["replica_id"]
        responses, total, errors = [], 0, False
        for topic in body["topics"]:
            parts = []
            for preq in topic["partitions"]:
                entry = self.replicas.read_fetch_partition(
                    topic["topic"],
                    preq,
                    replica_id=replica_id,
                    max_bytes=preq["partition_max_bytes"],
                    min_one=True,
                    now_ms=wall_ms(),
                    update_fetch_state=update,
                )
                errors |= entry["error_code"] != 0
                total += len(entry["records"])
                parts.append(entry)
            responses.append({"topic": topic["topic"], "partitions": parts})
        return responses, total, errors

    async def _fetch(self, body: dict[str, Any]) -> dict[str, Any]:
        responses, total, errors = self._read(body, update=True)
        if not errors and total < body["min_bytes"] and body["max_wait_ms"] > 0:
            keys = [(t["topic"], p["partition"]) for t in body["topics"] for p in t["partitions"]]
            waiter = FetchWaiter(body["min_bytes"] - total, from_follower=body["replica_id"] >= 0)
            self.replicas.park(keys, waiter)
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        asyncio.shield(waiter.future), body["max_wait_ms"] / 1000
                    )
            finally:
                self.replicas.unpark(keys, waiter)
            responses, _, _ = self._read(body, update=False)
        return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}


class Node:
    def __init__(
        self, node_id: int, data_dir: Path, config: ReplicationConfig, controller: FakeController
    ) -> None:
        self.node_id = node_id
        self.data_dir = data_dir
        self.config = config
        self.controller = controller
        self.image = MetadataImage()
        self.channels = ChannelPool(client_id=f"node-{node_id}", request_timeout_ms=5_000)
        self.log_manager = LogManager(data_dir, LogConfig(min_insync_replicas=2), clock=wall_ms)
        self.replicas = ReplicaManager(
            self.log_manager,
            wall_ms,
            node_id=node_id,
            config=config,
            channels=self.channels,
            alter_partition=controller.alter_partition,
        )
        self.replicas.load_existing()
        self.server = LeaderServer(self.replicas)

    def partition(self) -> Partition:
        partition = self.replicas.get(TOPIC, 0)
        assert partition is not None
        return partition

    async def stop(self) -> None:
        await self.replicas.stop()
        await self.server.close()
        await self.channels.close()
        self.log_manager.close()


class FakeController:
    """Commits records to every node; AlterPartition as the controller checks it."""

    def __init__(self) -> None:
        self.image = MetadataImage()
        self.records: list[MetadataRecord] = []
        self.nodes: dict[int, Node] = {}
        self.alter_requests: list[dict[str, Any]] = []
        self.isr_changed = asyncio.Event()
        self.refuse: Callable[[dict[str, Any]], ErrorCode | None] = lambda _: None

    def commit(self, *records: MetadataRecord) -> None:
        for record in records:
            self.image.replay(record)
        self.records.extend(records)
        for node in self.nodes.values():
            self.apply(node, records)

    def apply(self, node: Node, records: tuple[MetadataRecord, ...]) -> None:
        delta = MetadataDelta(node.image)
        for record in records:
            delta.replay(record)
        node.replicas.apply_delta(delta, node.image, wall_ms())

    def registration(self) -> PartitionRegistration:
        registration = self.image.partition(TOPIC_ID, 0)
        assert registration is not None
        return registration

    async def alter_partition(self, body: dict[str, Any]) -> dict[str, Any]:
        self.alter_requests.append(body)
        topics = []
        for topic in body["topics"]:
            results = []
            for p in topic["partitions"]:
                current = self.image.partition(bytes(topic["topic_id"]), p["partition_index"])
                assert current is not None
                code = self.refuse(p)
                if code is None and p["leader_epoch"] != current.leader_epoch:
                    code = ErrorCode.FENCED_LEADER_EPOCH
                if code is None and p["partition_epoch"] != current.partition_epoch:
                    code = ErrorCode.INVALID_UPDATE_VERSION
                if code is not None:
                    results.append(
                        {
                            "partition_index": p["partition_index"],
                            "error_code": code,
                            "leader_id": -1,
                            "leader_epoch": -1,
                            "isr": [],
                            "partition_epoch": -1,
                        }
                    )
                    continue
                isr = [m["broker_id"] for m in p["new_isr_with_epochs"]]
                self.commit(isr_change(isr))
                now = self.registration()
                results.append(
                    {
                        "partition_index": p["partition_index"],
                        "error_code": 0,
                        "leader_id": now.leader,
                        "leader_epoch": now.leader_epoch,
                        "isr": list(now.isr),
                        "partition_epoch": now.partition_epoch,
                    }
                )
            topics.append({"topic_id": topic["topic_id"], "partitions": results})
        self.isr_changed.set()
        return {"throttle_time_ms": 0, "error_code": 0, "topics": topics}


def register_broker(node_id: int, port: int) -> MetadataRecord:
    return make_record(
        "RegisterBrokerRecord",
        broker_id=node_id,
        incarnation_id=uuid.UUID(int=node_id).bytes,
        broker_epoch=100 + node_id,
        end_points=[
            {"name": "PLAINTEXT", "host": "127.0.0.1", "port": port, "security_protocol": 0}
        ],
        fenced=False,
    )


def topic_records(
    replicas: list[int], leader: int, isr: list[int] | None = None
) -> list[MetadataRecord]:
    return [
        make_record("TopicRecord", name=TOPIC, topic_id=TOPIC_ID),
        make_record(
            "PartitionRecord",
            topic_id=TOPIC_ID,
            partition_id=0,
            replicas=replicas,
            isr=replicas if isr is None else isr,
            leader=leader,
            leader_epoch=0,
            partition_epoch=0,
        ),
    ]


def isr_change(isr: list[int]) -> MetadataRecord:
    return make_record("PartitionChangeRecord", topic_id=TOPIC_ID, partition_id=0, isr=isr)


def leader_change(leader: int, isr: list[int] | None = None) -> MetadataRecord:
    fields: dict[str, Any] = {"leader": leader}
    if isr is not None:
        fields["isr"] = isr
    return make_record("PartitionChangeRecord", topic_id=TOPIC_ID, partition_id=0, **fields)


async def start_cluster(tmp_path: Path, count: int, config: ReplicationConfig) -> FakeController:
    controller = FakeController()
    for node_id in range(1, count + 1):
        node = Node(node_id, tmp_path / f"node-{node_id}", config, controller)
        await node.server.start()
        controller.nodes[node_id] = node
    controller.commit(
        *(register_broker(n.node_id, n.server.port) for n in controller.nodes.values())
    )
    return controller


async def eventually(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait until ``predicate`` holds, checking after every loop turn of other
    tasks (bounded: fails the test after ``timeout_s``)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)
