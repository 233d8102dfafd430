"""ControllerLink forwarding with the client's origin: an Envelope on a real socket.

A fake controller unwraps each EnvelopeRequest as the real one does, answers
the first NOT_CONTROLLER (the envelope refused whole) and the next with the
inner answer: the link retries, then hands back the inner response, and the
controller saw the client's principal, token flag and address.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from samsa.errors import ErrorCode
from samsa.net import ChannelPool
from samsa.protocol.api import decode_request, encode_response
from samsa.protocol.envelope import (
    ENVELOPE_KEY,
    ForwardedPrincipal,
    RequestOrigin,
    unwrap_request,
    wrap_response,
)
from samsa.server.metadata.controller_link import ControllerLink

RENEW = 39
ORIGIN = RequestOrigin(ForwardedPrincipal("User", "alice", True), "10.0.0.7")


class EnvelopeController:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                header, body = decode_request(memoryview(await reader.readexactly(size)))
                assert header.api_key == ENVELOPE_KEY
                inner = unwrap_request(body)
                self.seen.append(inner)
                if len(self.seen) == 1:
                    answer: dict[str, Any] = {
                        "response_data": None,
                        "error_code": ErrorCode.NOT_CONTROLLER,
                    }
                else:
                    renewed = {"error_code": 0, "expiry_timestamp_ms": 1234, "throttle_time_ms": 0}
                    answer = wrap_response(
                        RENEW, inner.header.api_version, inner.header.correlation_id, renewed
                    )
                writer.write(
                    b"".join(encode_response(ENVELOPE_KEY, 0, header.correlation_id, answer))
                )
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


async def _renew(controller: EnvelopeController) -> dict[str, Any]:
    server = await asyncio.start_server(controller.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = ChannelPool()
    never = asyncio.Event()

    async def leader_changed() -> None:
        await never.wait()

    link = ControllerLink(
        1,
        leader=lambda: 2,
        leader_changed=leader_changed,
        channels=pool,
        resolve=lambda node_id: ("127.0.0.1", port),
        retry_backoff_ms=10,
    )
    try:
        body = {"hmac": b"mac", "renew_period_ms": 60000}
        return await link.request(RENEW, 2, body, timeout_ms=10000, origin=ORIGIN)
    finally:
        await pool.close()
        server.close()


def test_a_forwarded_request_carries_its_origin_and_is_retried_elsewhere() -> None:
    controller = EnvelopeController()
    answer = asyncio.run(_renew(controller))
    assert answer == {"error_code": 0, "expiry_timestamp_ms": 1234, "throttle_time_ms": 0}
    assert len(controller.seen) == 2
    inner = controller.seen[-1]
    assert (inner.header.api_key, inner.header.api_version) == (RENEW, 2)
    assert inner.body == {"hmac": b"mac", "renew_period_ms": 60000}
    assert inner.origin == ORIGIN
