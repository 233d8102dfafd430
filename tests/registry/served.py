"""Brokers serving the schema registry, for the registry's process tests: start one, find its
URL in its log, and talk to it over plain HTTP (``http.client``, nothing in between)."""

from __future__ import annotations

import base64
import http.client
import json
import re
import ssl
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samsa.testing import BrokerProcess

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
READY_TIMEOUT_S = 90.0
"""A registry answers about a second after its broker; a loaded machine takes longer."""
REGISTRY_ARGS = ["--registry-listen", "127.0.0.1:0"]


def registry_url(proc: BrokerProcess, timeout: float = READY_TIMEOUT_S, since: int = 0) -> str:
    """The registry's base URL (no trailing slash), from its last "listening" log line
    after log line ``since`` (a restarted process logs a new one: wait for that)."""
    pattern = re.compile(r"schema registry listening on (https?://\S+?)/?$")

    def find() -> str | None:  # the last: a process restarted in the test logs a new one
        for line in reversed(proc.log_lines[since:]):
            found = pattern.search(line)
            if found is not None:
                return found.group(1)
        return None

    with proc._log_changed:
        if not proc._log_changed.wait_for(lambda: find() is not None, timeout):
            raise AssertionError("no registry:\n" + "\n".join(proc.log_lines[-40:]))
    url = find()
    assert url is not None
    return url


@contextmanager
def registry_broker(
    data: Path, settings: dict[str, str] | None = None, args: list[str] | None = None
) -> Iterator[BrokerProcess]:
    with BrokerProcess(data, settings=settings, args=args or REGISTRY_ARGS) as proc:
        yield proc


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    url: str,
    method: str,
    path: str,
    body: Any = None,
    *,
    user: tuple[str, str] | None = None,
    headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
    timeout: float = 30.0,
    **query: Any,
) -> Answer:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=timeout, context=context
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    sent = {"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE, **(headers or {})}
    if user is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(":".join(user).encode()).decode()
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
    target = path + (f"?{urllib.parse.urlencode(params)}" if params else "")
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    try:
        conn.request(method, target, data, sent)
        response = conn.getresponse()
        return Answer(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        conn.close()


def avro_record(name: str, *fields: tuple[str, Any]) -> str:
    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}
    )
