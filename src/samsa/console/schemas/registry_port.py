"""All the console sees of the schema registry: one narrow Protocol, answered on any broker.

The console never imports the registry package: the broker hands it an
object with these two reads (``server/endpoints/console_registry.py`` builds
it over this broker's copy of the registry's state), each made as the
logged-in caller, so its ACLs decide what is shown exactly as over the
registry's REST API (docs/schema-registry.md, "Security").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from samsa.security.caller import Caller


class ConsoleRegistry(Protocol):
    def get(
        self, caller: Caller, path: str, query: Mapping[str, str] | None = None
    ) -> tuple[int, Any]:
        """``GET path`` of Confluent's REST API (``/subjects``, ``/config/{subject}``,
        ...): (HTTP status, JSON body), with the registry's own error codes; 503 while
        this broker is still reading the registry's topic."""
        ...

    def decode(self, caller: Caller, data: bytes | None) -> dict[str, Any] | None:
        """A record's key or value in Confluent's wire format read with its schema:
        ``{"id", "subject", "version", "type", "json"}`` (or ``"error"`` instead of
        ``"json"``); None when it does not start with the magic byte and an id."""
        ...
