"""The registry's reads for the broker's other surfaces (the console), as the caller would be answered.

The console lists subjects and decodes records on any broker, whether or not
it serves the registry's REST API, from this node's copy of the state
(``mirror``).  A read is the REST API's own GET (``RegistryApi``: the same
answers, statuses and error codes), judged by the same ACL mapping as over
HTTP (``access``): a caller sees the subjects whose topic it may DESCRIBE
and, for a record, the schema only if it may DESCRIBE a subject holding it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from samsa.registry.api import RegistryApi
from samsa.registry.api_http import Request, Response
from samsa.registry.node.access import Allowed, RegistryAccess
from samsa.registry.payloads import decode_payload, schema_id_of
from samsa.registry.resolver import SchemaResolver
from samsa.registry.store import RegistryState


class RegistryReads:
    def __init__(self, state: RegistryState) -> None:
        self.state = state
        self.api = RegistryApi(state)
        self.access = RegistryAccess(state)
        self.resolver = SchemaResolver(state)

    def get(
        self, path: str, query: Mapping[str, str] | None, allowed: Allowed | None
    ) -> tuple[int, Any]:
        """(HTTP status, JSON body) of ``GET path``; ``allowed``: the caller's ACL
        answers (None: no authorizer)."""
        request = Request("GET", path, dict(query or {}))
        if allowed is not None:
            lacking = self.access.lacking(request, allowed)
            if lacking is not None:
                return 403, {"error_code": 40301, "message": f"not allowed {lacking.describe()}"}
        answer = self.api.handle(request)
        assert isinstance(answer, Response), "a GET never writes"
        if allowed is not None:
            answer = self.access.filtered(request, answer, allowed)
        return answer.status, json.loads(answer.body)

    def decode(self, data: bytes | None, allowed: Allowed | None) -> dict[str, Any] | None:
        """A payload in Confluent's wire format, decoded (``Decoded.to_json``); None when
        it is not framed.  Without the right to see the schema, only its id."""
        schema_id = schema_id_of(data)
        if schema_id is None or data is None:
            return None
        if allowed is not None:
            need = self.access.lacking(Request("GET", f"/schemas/ids/{schema_id}"), allowed)
            if need is not None:
                return {"id": schema_id, "error": f"not allowed to see it: needs {need.describe()}"}
        decoded = decode_payload(self.state, self.resolver, data)
        return None if decoded is None else decoded.to_json()
