"""ControllerLink against a slow controller on a real loopback socket."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import pytest

from samsa.errors import ErrorCode
from samsa.net import ChannelPool
from samsa.protocol.api import decode_request, encode_response
from samsa.server.metadata.controller_link import ControllerLink, ControllerUnavailable

CREATE_TOPICS = 19
CONTROLLER_ID = 2
SLOW_S = 0.4  # the controller's answer time: four attempt timeouts


class SlowController:
    """Answers each CreateTopics after SLOW_S, as a real controller would: the first
    creation succeeds and every later one finds the topic already there."""

    def __init__(self) -> None:
        self.received = 0
        self._created: set[str] = set()
        self._answers: set[asyncio.Task[None]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                header, body = decode_request(memoryview(await reader.readexactly(size)))
                self.received += 1
                task = asyncio.ensure_future(self._answer(writer, header, body))
                self._answers.add(task)
                task.add_done_callback(self._answers.discard)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def _answer(
        self, writer: asyncio.StreamWriter, header: Any, body: dict[str, Any]
    ) -> None:
        await asyncio.sleep(SLOW_S)
        topics = []
        for topic in body["topics"]:
            exists = topic["name"] in self._created
            self._created.add(topic["name"])
            code = ErrorCode.TOPIC_ALREADY_EXISTS if exists else ErrorCode.NONE
            topics.append({"name": topic["name"], "error_code": code, "error_message": None})
        answer = {"throttle_time_ms": 0, "topics": topics}
        if not writer.is_closing():
            writer.write(b"".join(encode_response(CREATE_TOPICS, 7, header.correlation_id, answer)))


async def _create_through_link(
    resend_when_slow: bool, controller: SlowController, timeout_ms: int = 5000
) -> dict[str, Any]:
    server = await asyncio.start_server(controller.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = ChannelPool()
    never = asyncio.Event()

    async def leader_changed() -> None:
        await never.wait()

    link = ControllerLink(
        1,
        leader=lambda: CONTROLLER_ID,
        leader_changed=leader_changed,
        channels=pool,
        resolve=lambda node_id: ("127.0.0.1", port),
        attempt_timeout_ms=100,
    )
    body = {
        "topics": [
            {
                "name": "orders",
                "num_partitions": 1,
                "replication_factor": 1,
                "assignments": [],
                "configs": [],
            }
        ],
        "timeout_ms": 5000,
        "validate_only": False,
    }
    try:
        answer = await link.request(
            CREATE_TOPICS, 7, body, timeout_ms=timeout_ms, resend_when_slow=resend_when_slow
        )
    finally:
        await pool.close()
        server.close()
    return answer


def test_a_slow_create_is_not_resent_and_succeeds() -> None:
    controller = SlowController()
    answer = asyncio.run(asyncio.wait_for(_create_through_link(False, controller), 10))
    assert controller.received == 1
    assert answer["topics"][0]["error_code"] == ErrorCode.NONE


def test_attempt_timeouts_alone_resend_a_create_that_is_still_running() -> None:
    """Why the flag exists: with attempt timeouts the create reached the controller
    several times (a real one answers the later ones TOPIC_ALREADY_EXISTS)."""
    controller = SlowController()
    with pytest.raises(ControllerUnavailable):
        asyncio.run(asyncio.wait_for(_create_through_link(True, controller, 600), 10))
    assert controller.received >= 2
