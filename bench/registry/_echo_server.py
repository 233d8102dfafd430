"""The floor of the registry's lookups: ``samsa.http``'s endpoint answering a fixed
registry-shaped body to any request, with the registry endpoint's own options
(fallback routing, kept-alive connections, its content type), in a process of its
own as the broker is.  Part of ``registry_lookups``; prints its URL when it answers.

    .venv/bin/python -m bench.registry._echo_server
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from samsa.http.endpoint import HttpEndpoint
from samsa.http.messages import Request, Response

BODY = b'{"schema":"{\\"type\\":\\"record\\",\\"name\\":\\"Order\\",\\"fields\\":[]}"}'
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


async def serve() -> None:
    async def echo(_: Request) -> Response:
        return Response(200, BODY, CONTENT_TYPE)

    endpoint = HttpEndpoint("echo", {}, fallback=echo, keep_alive_bodies=True)
    host, port = await endpoint.bind("127.0.0.1", 0)
    await endpoint.serve()
    print(f"echo listening on http://{host}:{port}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await endpoint.stop()


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    asyncio.run(serve())
