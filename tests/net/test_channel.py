"""NodeChannel against a real broker process and against peers that misbehave."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from samsa.net import ChannelError, ChannelPool, NodeChannel
from samsa.net.channel import ChannelSecurity
from samsa.testing import BrokerProcess

API_VERSIONS = 18
METADATA = 3


def run(coro: Awaitable[object]) -> object:
    return asyncio.run(asyncio.wait_for(coro, 30))  # type: ignore[arg-type]


def _host_port(bootstrap: str) -> tuple[str, int]:
    host, port = bootstrap.rsplit(":", 1)
    return host, int(port)


def test_pipelined_requests_get_their_own_answers(samsa_broker: BrokerProcess) -> None:
    async def scenario() -> None:
        channel = NodeChannel(*_host_port(samsa_broker.bootstrap))
        try:
            answers = await asyncio.gather(
                channel.request(
                    API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"}
                ),
                channel.request(METADATA, 12, {"topics": None}),
                channel.request(API_VERSIONS, 0, {}),
            )
        finally:
            await channel.close()
        assert answers[0]["error_code"] == 0 and answers[0]["api_keys"]
        assert answers[1]["brokers"][0]["port"] == samsa_broker.port
        assert answers[2]["api_keys"] == answers[0]["api_keys"]

    run(scenario())


def test_refused_connection_is_a_channel_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there

    async def scenario() -> None:
        channel = NodeChannel("127.0.0.1", port)
        with pytest.raises(ChannelError, match="cannot connect"):
            await channel.request(API_VERSIONS, 0, {})
        await channel.close()

    run(scenario())


async def _silent_peer(
    handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_unanswered_request_times_out_and_fails_its_neighbours() -> None:
    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # swallow everything until the client hangs up

    async def scenario() -> None:
        server, port = await _silent_peer(never_answer)
        channel = NodeChannel("127.0.0.1", port)
        try:
            slow = asyncio.ensure_future(channel.request(API_VERSIONS, 0, {}, timeout_ms=5000))
            with pytest.raises(ChannelError, match="no answer"):
                await channel.request(API_VERSIONS, 0, {}, timeout_ms=50)
            # The connection is dropped on timeout, so the other request fails at
            # once instead of waiting out its own five seconds.
            with pytest.raises(ChannelError):
                await asyncio.wait_for(slow, 1)
        finally:
            await channel.close()
            server.close()

    run(scenario())


def test_a_connection_failing_after_its_caller_gave_up_is_not_an_unretrieved_error() -> None:
    """A broker stopping while it registers cancels the request that waits for
    the connection; the connection failing afterwards went to the log as
    "Task exception was never retrieved" with a traceback."""

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # the SASL handshake never gets an answer

    async def scenario() -> list[dict[str, object]]:
        unhandled: list[dict[str, object]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: unhandled.append(ctx))
        server, port = await _silent_peer(never_answer)
        security = ChannelSecurity(sasl_mechanism="PLAIN", username="u", password="p")
        channel = NodeChannel("127.0.0.1", port, connect_timeout_ms=100, security=security)
        try:
            request = asyncio.ensure_future(channel.request(API_VERSIONS, 0, {}))
            await asyncio.sleep(0.01)
            connecting = channel._connecting
            assert connecting is not None
            request.cancel()
            with pytest.raises(asyncio.CancelledError):
                await request
            await asyncio.wait([connecting], timeout=10)  # retrieves nothing
            assert connecting.done() and not connecting.cancelled()
        finally:
            await channel.close()
            server.close()
        del channel, request, connecting
        gc.collect()
        await asyncio.sleep(0)
        return unhandled

    assert run(scenario()) == []


def test_garbage_answer_fails_the_request() -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(4)
        writer.write(b"\x7f\xff\xff\xff")  # a 2 GiB frame size
        await writer.drain()
        await reader.read()

    async def scenario() -> None:
        server, port = await _silent_peer(garbage)
        channel = NodeChannel("127.0.0.1", port)
        try:
            with pytest.raises(ChannelError, match="bad response size"):
                await channel.request(API_VERSIONS, 0, {}, timeout_ms=2000)
        finally:
            await channel.close()
            server.close()

    run(scenario())


def test_channel_reconnects_after_the_peer_restarts(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    port = broker.port

    async def scenario() -> None:
        pool = ChannelPool(request_timeout_ms=2000)
        pool.set_address(1, "127.0.0.1", port)
        try:
            channel = pool.channel(1)
            assert channel is not None
            assert (await channel.request(API_VERSIONS, 0, {}))["error_code"] == 0
            await asyncio.to_thread(broker.kill)
            with pytest.raises(ChannelError):
                await channel.request(API_VERSIONS, 0, {})
            broker.port = port
            await asyncio.to_thread(broker.start)
            assert (await channel.request(API_VERSIONS, 0, {}))["error_code"] == 0
            assert pool.channel(2) is None
        finally:
            await pool.close()

    try:
        run(scenario())
    finally:
        broker.kill()
