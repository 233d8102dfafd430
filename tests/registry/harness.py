"""A registry driven the way the I/O layer will drive it, with ``_schemas`` as a list."""

from __future__ import annotations

import json
from typing import Any

from samsa.registry.api import PendingWrite, RegistryApi, Request, Response
from samsa.registry.store import RegistryState


class Registry:
    def __init__(self) -> None:
        self.log: list[tuple[bytes, bytes | None]] = []  # the _schemas topic
        self.state = RegistryState()
        self.api = RegistryApi(self.state)

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        **query: Any,
    ) -> Response:
        raw = (
            body
            if isinstance(body, bytes)
            else (b"" if body is None else json.dumps(body).encode())
        )
        query_text = {
            k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()
        }
        request = Request(method, path, query_text, headers or {}, raw)
        result = self.api.handle(request)
        if isinstance(result, PendingWrite):
            assert self.api.is_write(request)
            for record in result.records:  # append, then read back and apply
                self.log.append((record.key, record.value))
                self.state.apply(record.key, record.value, len(self.log) - 1)
            return result.finish()
        return result

    def register(
        self, subject: str, schema: Any, schema_type: str = "AVRO", **extra: Any
    ) -> Response:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        body = {"schema": text, **({"schemaType": schema_type} if schema_type != "AVRO" else {})}
        body.update({k: v for k, v in extra.items() if k in ("references", "id", "version")})
        query = {k: v for k, v in extra.items() if k not in ("references", "id", "version")}
        return self.call("POST", f"/subjects/{subject}/versions", body, **query)

    def replay(self) -> RegistryState:
        """A fresh node's state, read from the topic from the start."""
        state = RegistryState()
        for offset, (key, value) in enumerate(self.log):
            state.apply(key, value, offset)
        return state
