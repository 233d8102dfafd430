"""The broker's small HTTP server over a real socket: methods, bodies, errors."""

from __future__ import annotations

import asyncio
import json

from samsa.server.http_endpoint import (
    MAX_BODY,
    HttpEndpoint,
    HttpError,
    Request,
    Response,
    json_response,
)


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
    head = f"POST {path} HTTP/1.1\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def test_get_routes_answer_async_handlers_and_refuse_other_methods() -> None:
    (ok, put, post_on_get, unknown_post) = run(
        [
            b"GET /echo HTTP/1.1\r\n\r\n",
            b"PUT /echo HTTP/1.1\r\n\r\n",
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
            f"POST /post HTTP/1.1\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode(),
            b"POST /post HTTP/1.1\r\nContent-Length: lots\r\n\r\n",
            b"POST /post HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}",
        ]
    )
    assert json.loads(ok[2]) == {"body": '{"a": 1}', "type": "application/json"}
    assert too_big[0] == 413
    assert bad_length[0] == 400
    assert short[0] == 400


def test_errors_are_one_line_never_a_trace() -> None:
    (refused, crashed) = run([b"GET /refuse HTTP/1.1\r\n\r\n", b"GET /crash HTTP/1.1\r\n\r\n"])
    assert refused[0] == 400
    assert json.loads(refused[2]) == {"error": "limit must be an integer, not 'x'", "status": 400}
    assert crashed[0] == 500
    assert b"secret" not in crashed[2] and b"Traceback" not in crashed[2]
    (plain,) = run([b"GET /refuse HTTP/1.1\r\n\r\n"], json_errors=False)
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
            writer.write(b"GET /echo HTTP/1.1\r\nConnection: close\r\n\r\n")
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
            writer.write(b"GET /echo HTTP/1.1\r\n\r\n")
            assert (await read_response(reader))[0] == 200
        finally:
            await endpoint.stop()
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()

    asyncio.run(main())
