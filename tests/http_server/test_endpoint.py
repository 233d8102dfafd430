"""The HTTP endpoint (h11) over a real socket: methods, bodies, limits, errors,
keep-alive, and what guards it (Host names, cross-site POSTs, a login gate)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samsa.http import endpoint as endpoint_module
from samsa.http.endpoint import (
    MAX_BODY,
    MAX_HEAD,
    EndpointSecurity,
    HttpEndpoint,
    HttpError,
    Request,
    Response,
    json_response,
)
from samsa.http.hosts import HostCheck
from samsa.security.principal import KafkaPrincipal, user


def refuse(_: Request) -> Response:
    raise HttpError(400, "limit must be an integer, not 'x'")


def crash(_: Request) -> Response:
    raise RuntimeError("a bug with a secret in it")


async def echo(request: Request) -> Response:
    await asyncio.sleep(0)
    return json_response({"body": request.body.decode(), "type": request.content_type})


async def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    writer.write_eof()  # a body shorter than its Content-Length ends here
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split(" ")[1]), headers, body


def run(
    raw_requests: list[bytes], *, json_errors: bool = True
) -> list[tuple[int, dict[str, str], bytes]]:
    async def main() -> list[tuple[int, dict[str, str], bytes]]:
        endpoint = HttpEndpoint(
            "test",
            {"/refuse": refuse, "/crash": crash, "/echo": echo},
            {"/post": echo},
            json_errors=json_errors,
        )
        _, port = await endpoint.bind("127.0.0.1", 0)
        await endpoint.serve()
        try:
            return [await exchange(port, raw) for raw in raw_requests]
        finally:
            await endpoint.stop()

    return asyncio.run(main())


def post(path: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def test_get_routes_answer_async_handlers_and_refuse_other_methods() -> None:
    (ok, put, post_on_get, unknown_post) = run(
        [
            b"GET /echo HTTP/1.1\r\nHost: localhost\r\n\r\n",
            b"PUT /echo HTTP/1.1\r\nHost: localhost\r\n\r\n",
            post("/echo", b"{}"),
            post("/nowhere", b"{}"),
        ]
    )
    assert ok[0] == 200 and json.loads(ok[2]) == {"body": "", "type": ""}
    assert (put[0], put[1]["allow"]) == (405, "GET, HEAD, POST")
    assert (post_on_get[0], post_on_get[1]["allow"]) == (405, "GET, HEAD")
    assert unknown_post[0] == 404


def test_post_routes_read_a_bounded_body() -> None:
    (ok, too_big, bad_length, short) = run(
        [
            post("/post", b'{"a": 1}'),
            f"POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode(),
            b"POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n",
            b"POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{}",
        ]
    )
    assert json.loads(ok[2]) == {"body": '{"a": 1}', "type": "application/json"}
    assert too_big[0] == 413
    assert bad_length[0] == 400
    assert short[0] == 400


def test_errors_are_one_line_never_a_trace() -> None:
    (refused, crashed) = run(
        [b"GET /refuse HTTP/1.1\r\nHost: x\r\n\r\n", b"GET /crash HTTP/1.1\r\nHost: x\r\n\r\n"]
    )
    assert refused[0] == 400
    assert json.loads(refused[2]) == {"error": "limit must be an integer, not 'x'", "status": 400}
    assert crashed[0] == 500
    assert b"secret" not in crashed[2] and b"Traceback" not in crashed[2]
    (plain,) = run([b"GET /refuse HTTP/1.1\r\nHost: x\r\n\r\n"], json_errors=False)
    assert plain[2] == b"limit must be an integer, not 'x'\n"


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One response off a connection that may stay open (framed by Content-Length)."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    body = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), 10)
    return int(lines[0].split(" ")[1]), headers, body


def test_a_polling_client_keeps_its_connection_until_it_asks_to_close() -> None:
    """HTTP/1.1 GETs share one connection (a console page polls every second);
    ``Connection: close``, HTTP/1.0 and a POST each end theirs after the answer,
    and stopping the endpoint ends an idle kept-alive one."""

    async def main() -> None:
        endpoint = HttpEndpoint("test", {"/echo": echo}, {"/post": echo}, json_errors=True)
        _, port = await endpoint.bind("127.0.0.1", 0)
        await endpoint.serve()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(3):
                writer.write(b"GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
                status, headers, body = await read_response(reader)
                assert (status, headers["connection"]) == (200, "keep-alive")
                assert json.loads(body) == {"body": "", "type": ""}
            writer.write(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status, headers, _ = await read_response(reader)
            assert (status, headers["connection"]) == (200, "close")
            assert await asyncio.wait_for(reader.read(), 10) == b""
            writer.close()

            for request in (b"GET /echo HTTP/1.0\r\n\r\n", post("/post", b"{}")):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(request)
                status, headers, _ = await read_response(reader)
                assert (status, headers["connection"]) == (200, "close")
                assert await asyncio.wait_for(reader.read(), 10) == b""
                writer.close()

            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /echo HTTP/1.1\r\nHost: localhost\r\n\r\n")
            assert (await read_response(reader))[0] == 200
        finally:
            await endpoint.stop()
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()

    asyncio.run(main())


def serve_with(
    raw_requests: list[bytes], security: EndpointSecurity, routes: dict[str, Any] | None = None
) -> list[tuple[int, dict[str, str], bytes]]:
    async def main() -> list[tuple[int, dict[str, str], bytes]]:
        endpoint = HttpEndpoint(
            "test",
            routes or {"/echo": echo, "/open/*": echo, "/who": who},
            {"/post": echo},
            json_errors=True,
            security=security,
        )
        _, port = await endpoint.bind("127.0.0.1", 0)
        await endpoint.serve()
        try:
            return [await exchange(port, raw) for raw in raw_requests]
        finally:
            await endpoint.stop()

    return asyncio.run(main())


def who(request: Request) -> Response:
    return json_response({"principal": str(request.principal), "client": request.client_host})


def test_heads_limits_methods_and_malformed_requests_each_get_their_status() -> None:
    long_head = b"GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (MAX_HEAD + 10)
    (head, big_head, garbage, no_host, delete, missing, chunked_big) = run(
        [
            b"HEAD /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            long_head,
            b"\x16\x03\x01\x02\x00 not http\r\n\r\n",
            b"GET /echo HTTP/1.1\r\n\r\n",
            b"DELETE /echo HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            b"POST /post HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"".join(b"4000\r\n" + b"z" * 0x4000 + b"\r\n" for _ in range(5))
            + b"0\r\n\r\n",
        ]
    )
    assert head[0] == 200 and head[2] == b"" and int(head[1]["content-length"]) > 0
    assert big_head[0] == 431
    assert garbage[0] == 400 and garbage[1]["connection"] == "close"
    assert no_host[0] == 400  # HTTP/1.1 requires Host
    assert (delete[0], delete[1]["allow"]) == (405, "GET, HEAD, POST")
    assert missing[0] == 404
    assert chunked_big[0] == 413
    for answer in (head, delete, missing):
        assert answer[1]["cache-control"] == "no-store"
        assert answer[1]["x-content-type-options"] == "nosniff"
        assert answer[1]["x-frame-options"] == "DENY"


def test_a_wrong_host_header_is_misdirected() -> None:
    security = EndpointSecurity(hosts=HostCheck("127.0.0.1", setting="x.allowed.hosts"))
    answers = serve_with(
        [
            b"GET /echo HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
            b"GET /echo HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
            b"GET /echo HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
            b"GET /echo HTTP/1.1\r\nHost: evil.example:8080\r\n\r\n",
            b"GET /echo HTTP/1.0\r\n\r\n",
        ],
        security,
    )
    assert [a[0] for a in answers] == [200, 200, 200, 421, 421]
    assert "evil.example" in json.loads(answers[3][2])["error"]
    assert "x.allowed.hosts" in json.loads(answers[3][2])["error"]


def test_host_names_follow_the_bind_address_and_the_setting() -> None:
    everywhere = HostCheck("0.0.0.0", ["broker1.example"], machine_names=lambda: {"node7"})
    assert everywhere.allows("10.1.2.3:9100") and everywhere.allows("[fe80::1]:80")
    assert everywhere.allows("NODE7:9100") and everywhere.allows("broker1.example.")
    assert not everywhere.allows("evil.example") and not everywhere.allows(None)
    named = HostCheck("broker1.example")
    assert named.allows("broker1.example:8080")
    assert not named.allows("localhost") and not named.allows("10.1.2.3")
    assert HostCheck("10.0.0.5", ["*"]).allows("anything.example")


def test_a_cross_site_post_is_refused_before_its_handler_runs() -> None:
    def form(origin: str) -> bytes:
        return (
            b"POST /post HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: "
            + origin.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        )

    same, other, null, fetch_site = run(
        [
            form("http://localhost:8080"),
            form("https://evil.example"),
            form("null"),
            b"POST /post HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: cross-site\r\n"
            b"Content-Length: 2\r\n\r\n{}",
        ]
    )
    assert same[0] == 200
    assert (other[0], null[0], fetch_site[0]) == (403, 403, 403)
    assert "cross-site" in json.loads(other[2])["error"]


class OneUserGate:
    """A gate admitting requests that carry ``X-User: alice``."""

    def is_public(self, request: Request) -> bool:
        return request.path.startswith("/open/")

    async def admit(self, request: Request) -> KafkaPrincipal:
        if request.headers.get("x-user") != "alice":
            raise HttpError(401, "log in first")
        return user("alice")


def test_the_gate_admits_or_refuses_every_route_but_the_public_ones() -> None:
    answers = serve_with(
        [
            b"GET /who HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /who HTTP/1.1\r\nHost: x\r\nX-User: alice\r\n\r\n",
            b"GET /open/page HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n",
        ],
        EndpointSecurity(gate=OneUserGate()),
    )
    assert answers[0][0] == 401
    assert json.loads(answers[1][2]) == {"principal": "User:alice", "client": "127.0.0.1"}
    assert answers[2][0] == 200
    assert answers[3][0] == 404


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=600),
        st.lists(
            st.sampled_from(
                [
                    b"GET /echo HTTP/1.1\r\n",
                    b"POST /post HTTP/1.1\r\n",
                    b"HEAD / HTTP/1.0\r\n",
                    b"Host: x\r\n",
                    b"Content-Length: 3\r\n",
                    b"Content-Length: -1\r\n",
                    b"Transfer-Encoding: chunked\r\n",
                    b"Connection: close\r\n",
                    b"\r\n",
                    b"abc",
                    b"3\r\nabc\r\n0\r\n\r\n",
                    b"\x00\xff",
                    b":",
                    b" ",
                ]
            ),
            max_size=12,
        ).map(b"".join),
    )
)
def test_any_bytes_get_well_formed_answers_and_never_an_exception(data: bytes) -> None:
    """Fed straight to the connection's loop: whatever arrives, the endpoint
    answers zero or more complete HTTP responses (as h11 on the client side
    reads them) and ends the conversation without raising."""

    async def main() -> bytes:
        endpoint = HttpEndpoint("fuzz", {"/echo": echo, "/": echo}, {"/post": echo})
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        writer = _Collecting()
        await asyncio.wait_for(
            endpoint.converse(reader, writer, ("127.0.0.1", 1)),  # type: ignore[arg-type]
            10,
        )
        return bytes(writer.data)

    statuses = response_statuses(asyncio.run(main()))
    assert 500 not in statuses
    # 501: a Transfer-Encoding h11 does not take; never 500 (an exception).
    assert all(status == 200 or 400 <= status < 500 or status == 501 for status in statuses)


def response_statuses(out: bytes) -> list[int]:
    """The status of each complete response in ``out`` (a HEAD's has no body)."""
    statuses = []
    while out:
        head, sep, rest = out.partition(b"\r\n\r\n")
        assert sep, out
        lines = head.decode("latin-1").split("\r\n")
        assert lines[0].startswith("HTTP/1.1 "), lines[0]
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers["content-length"])
        if rest[length:] and not rest[length:].startswith(b"HTTP/1.1 "):
            length = 0  # the answer to a HEAD
        statuses.append(int(lines[0].split(" ")[1]))
        out = rest[length:]
    return statuses


class _Collecting:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, chunk: bytes) -> None:
        self.data += chunk

    async def drain(self) -> None:
        return None


def test_a_head_dribbled_a_byte_at_a_time_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole head must arrive within READ_TIMEOUT, not each byte of it."""
    monkeypatch.setattr(endpoint_module, "READ_TIMEOUT", 0.5)

    async def main() -> float:
        endpoint = HttpEndpoint("test", {"/echo": echo})
        _, port = await endpoint.bind("127.0.0.1", 0)
        await endpoint.serve()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            started = time.monotonic()
            closed = asyncio.ensure_future(reader.read())
            for byte in b"GET /echo HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200:
                if closed.done():
                    break
                writer.write(bytes([byte]))
                await asyncio.sleep(0.05)  # the client's pace, a byte per 50 ms
            assert await asyncio.wait_for(closed, 5) == b""
            writer.close()
            return time.monotonic() - started
        finally:
            await endpoint.stop()

    assert asyncio.run(main()) < 3.0
