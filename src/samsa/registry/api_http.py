"""The API's request, response and pending-write types, shared by its handlers."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from samsa.registry import errors
from samsa.registry.writes import Record

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPTED_BODY_TYPES = (
    "application/vnd.schemaregistry.v1+json",
    "application/vnd.schemaregistry+json",
    "application/json",
    "application/octet-stream",
)


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # raw, percent-encoded, without the query string
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""

    def flag(self, name: str) -> bool:
        return self.query.get(name, "false").strip().lower() == "true"


@dataclass(frozen=True)
class Response:
    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class PendingWrite:
    records: list[Record]
    finish: Callable[[], Response]


def json_response(body: Any, status: int = 200) -> Response:
    data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    return Response(status, CONTENT_TYPE, data)


def error_response(error: errors.RegistryError) -> Response:
    return json_response(error.body(), error.status)
