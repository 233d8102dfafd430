"""The values an HTTP handler takes and gives: a request, a response, a refusal.

A handler refuses bad input by raising ``HttpError`` (status, one-line
message, and headers such as ``Retry-After`` or ``WWW-Authenticate``); the
endpoint answers it as JSON (``{"error": message, "status": code}``) or plain
text, as the endpoint is configured.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie

from samsa.security.principal import KafkaPrincipal

REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 409: "Conflict", 413: "Content Too Large",
    415: "Unsupported Media Type", 421: "Misdirected Request", 422: "Unprocessable Content",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large", 500: "Internal Server Error", 502: "Bad Gateway",
    501: "Not Implemented", 503: "Service Unavailable", 504: "Gateway Timeout",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: bytes = b""
    content_type: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Header names in lower case; a repeated header's values joined by ", "."""
    client: tuple[str, int] = ("", 0)
    """The client's address and port (the TCP peer)."""
    principal: KafkaPrincipal | None = None
    """Who the endpoint's login check admitted (None: no login on this endpoint)."""
    raw_path: str = ""
    """The path as sent, still percent-encoded (``path`` is decoded): a route whose
    path segments may hold an encoded ``/`` (a registry subject) splits this one."""

    @property
    def client_host(self) -> str:
        return self.client[0]

    def cookie(self, name: str) -> str | None:
        """The value of cookie ``name``, None when absent or the header is malformed."""
        raw = self.headers.get("cookie")
        if not raw:
            return None
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw)
        except CookieError:
            return None
        morsel = jar.get(name)
        return None if morsel is None else morsel.value


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    """Extra headers (``Set-Cookie``, ``Allow``, ``Retry-After``, ...)."""


class HttpError(Exception):
    """Bad input or a refused request: answered with ``status`` and the message."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def not_found(path: str) -> Response:
    return Response(404, f"no such page: {path}\n".encode())


def json_response(
    value: object, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(status, json.dumps(value).encode(), "application/json", headers or {})


def error_response(error: HttpError, *, as_json: bool) -> Response:
    if as_json:
        return json_response(
            {"error": error.message, "status": error.status}, error.status, error.headers
        )
    return Response(error.status, f"{error.message}\n".encode(), headers=error.headers)
