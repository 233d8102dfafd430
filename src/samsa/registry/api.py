"""Confluent Schema Registry's REST API as a sans-I/O function.

The I/O layer turns an HTTP request into a ``Request`` (raw path, decoded query,
headers with lower-case names, body bytes) and calls ``RegistryApi.handle``:

* a ``Response`` is the answer (reads, and every refusal);
* a ``PendingWrite`` carries records for ``_schemas``: append them, wait until
  this node's ``RegistryState`` has applied them, then ``finish()`` gives the
  answer.  Writes must run one at a time on the primary, after it has read
  ``_schemas`` to its end; ``is_write`` tells a non-primary what to forward.

Paths, JSON shapes, status codes and error bodies are Confluent's.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from samsa.registry import errors
from samsa.registry.api_http import (
    ACCEPTED_BODY_TYPES,
    CONTENT_TYPE,
    PendingWrite,
    Request,
    Response,
    error_response,
    json_response,
)
from samsa.registry.api_reads import Reads
from samsa.registry.api_writes import Writes
from samsa.registry.resolver import SchemaResolver
from samsa.registry.store import RegistryState


class RegistryApi:
    def __init__(self, state: RegistryState) -> None:
        self.state = state
        self.resolver = SchemaResolver(state)
        self.reads = Reads(state, self.resolver)
        self.writes = Writes(state, self.resolver)

    @staticmethod
    def is_write(request: Request) -> bool:
        """Whether the request changes state (a non-primary forwards these)."""
        method = request.method.upper()
        if method in ("GET", "HEAD"):
            return False
        parts = [p for p in request.path.split("/") if p]
        # compatibility checks and POST /subjects/{subject} lookups only read
        return not (method == "POST" and (parts[:1] == ["compatibility"] or len(parts) == 2))

    def handle(self, request: Request) -> Response | PendingWrite:
        try:
            return self._handle(request)
        except errors.RegistryError as e:
            return error_response(e)

    def _handle(self, request: Request) -> Response | PendingWrite:
        method = request.method.upper()
        parts = [unquote(p) for p in request.path.split("/") if p]
        body = self._body(request) if method in ("POST", "PUT") else None
        route = self._route(method, parts)
        if route is None:
            raise errors.not_found_path()
        handler, args = route
        if handler is None:
            raise errors.method_not_allowed()
        result = handler(request, body, *args)
        if isinstance(result, PendingWrite):
            return result
        return result if isinstance(result, Response) else json_response(result)

    def _body(self, request: Request) -> Any:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type and content_type not in ACCEPTED_BODY_TYPES:
            raise errors.unsupported_media_type()
        if not request.body.strip():
            return {}
        try:
            return json.loads(request.body)
        except (ValueError, UnicodeDecodeError) as e:
            raise errors.bad_request(f"Unrecognized JSON body: {e}") from e

    def _route(self, method: str, parts: list[str]) -> tuple[Any, tuple[Any, ...]] | None:
        """(handler or None when the method is not allowed, path arguments), or None."""
        r, w = self.reads, self.writes
        table: list[tuple[list[str], dict[str, Any]]] = [
            ([], {"GET": lambda req, body: {}}),
            (["schemas"], {"GET": r.list_schemas}),
            (["schemas", "types"], {"GET": r.schema_types}),
            (["schemas", "ids", "*"], {"GET": r.schema_by_id}),
            (["schemas", "ids", "*", "schema"], {"GET": r.raw_schema_by_id}),
            (["schemas", "ids", "*", "subjects"], {"GET": r.subjects_of_id}),
            (["schemas", "ids", "*", "versions"], {"GET": r.versions_of_id}),
            (["subjects"], {"GET": r.list_subjects}),
            (["subjects", "*"], {"POST": r.lookup, "DELETE": w.delete_subject}),
            (["subjects", "*", "versions"], {"GET": r.list_versions, "POST": w.register}),
            (["subjects", "*", "versions", "*"], {"GET": r.get_version, "DELETE": w.delete_version}),
            (["subjects", "*", "versions", "*", "schema"], {"GET": r.raw_version}),
            (["subjects", "*", "versions", "*", "referencedby"], {"GET": r.referenced_by}),
            (["config"], {"GET": r.get_config, "PUT": w.put_config, "DELETE": w.delete_config}),
            (["config", "*"], {"GET": r.get_config, "PUT": w.put_config, "DELETE": w.delete_config}),
            (["mode"], {"GET": r.get_mode, "PUT": w.put_mode}),
            (["mode", "*"], {"GET": r.get_mode, "PUT": w.put_mode, "DELETE": w.delete_mode}),
            (["compatibility", "subjects", "*", "versions"], {"POST": r.check_compatibility}),
            (["compatibility", "subjects", "*", "versions", "*"], {"POST": r.check_compatibility}),
        ]  # fmt: skip
        for pattern, methods in table:
            if len(pattern) == len(parts) and all(
                p in ("*", q) for p, q in zip(pattern, parts, strict=True)
            ):
                args: tuple[str | None, ...] = tuple(
                    q for p, q in zip(pattern, parts, strict=True) if p == "*"
                )
                if pattern[:1] in (["config"], ["mode"]) and not args:
                    args = (None,)
                if pattern == ["compatibility", "subjects", "*", "versions"]:
                    args = (*args, None)
                return methods.get(method), args
        return None


__all__ = [
    "CONTENT_TYPE",
    "PendingWrite",
    "RegistryApi",
    "Request",
    "Response",
    "error_response",
    "json_response",
]
