"""Requests that reach a listener before its node can answer them wait, bounded.

Driven with real routers and real request frames; the dispatch result is what
the socket server would run for the connection.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from samsa.protocol.api import decode_response, encode_request
from samsa.server.connections.listener_routing import ListenerRouting
from samsa.server.connections.router import Router
from samsa.server.connections.socket_server import CloseConnection

API_VERSIONS, METADATA, VOTE = 18, 3, 52
HELLO = {"client_software_name": "test", "client_software_version": "1"}


def api_versions_frame() -> bytes:
    return encode_request(API_VERSIONS, 3, 7, "test", HELLO)[4:]  # without the size


def advertised_keys(output: Any) -> set[int]:
    frame = b"".join(bytes(chunk) for chunk in output)[4:]
    _, body = decode_response(API_VERSIONS, 3, memoryview(frame))
    return {entry["api_key"] for entry in body["api_keys"]}


def quorum_router() -> Router:
    router = Router()
    router.register(VOTE, lambda ctx, req: {"error_code": 0})
    return router


def client_router() -> Router:
    router = quorum_router()
    router.register(METADATA, lambda ctx, req: {"brokers": [], "topics": []})
    return router


def test_api_versions_waits_for_the_complete_router_and_lists_its_apis() -> None:
    async def main() -> None:
        routing = ListenerRouting()
        routing.install("PLAINTEXT", quorum_router(), complete=False)
        held = routing.dispatcher("PLAINTEXT")(api_versions_frame(), None)
        task = asyncio.ensure_future(held)
        await asyncio.sleep(0)
        assert not task.done()
        routing.install("PLAINTEXT", client_router(), complete=True)
        assert advertised_keys(await task) == {API_VERSIONS, VOTE, METADATA}

    asyncio.run(main())


def test_requests_before_any_router_wait_for_the_first_one() -> None:
    async def main() -> None:
        routing = ListenerRouting()
        held = asyncio.ensure_future(routing.dispatcher("CONTROLLER")(api_versions_frame(), None))
        await asyncio.sleep(0)
        routing.install("CONTROLLER", quorum_router(), complete=True)
        assert advertised_keys(await held) == {API_VERSIONS, VOTE}

    asyncio.run(main())


def test_a_complete_listener_answers_at_once() -> None:
    routing = ListenerRouting()
    routing.install("PLAINTEXT", client_router(), complete=True)
    output = routing.dispatcher("PLAINTEXT")(api_versions_frame(), None)
    assert advertised_keys(output) == {API_VERSIONS, VOTE, METADATA}


def test_a_request_held_too_long_closes_its_connection() -> None:
    async def main() -> None:
        routing = ListenerRouting(hold_limit_ms=20)
        routing.install("PLAINTEXT", quorum_router(), complete=False)
        with pytest.raises(CloseConnection, match="did not finish starting within 20 ms"):
            await routing.dispatcher("PLAINTEXT")(api_versions_frame(), None)

    asyncio.run(main())


def test_no_more_than_max_held_requests_wait() -> None:
    async def main() -> None:
        routing = ListenerRouting(max_held=1)
        routing.install("PLAINTEXT", quorum_router(), complete=False)
        dispatch = routing.dispatcher("PLAINTEXT")
        first = asyncio.ensure_future(dispatch(api_versions_frame(), None))
        await asyncio.sleep(0)
        with pytest.raises(CloseConnection, match="1 requests already wait"):
            await dispatch(api_versions_frame(), None)
        routing.install("PLAINTEXT", client_router(), complete=True)
        assert API_VERSIONS in advertised_keys(await first)

    asyncio.run(main())
