"""The API's writing endpoints: request bodies checked, commands planned as pending writes."""

from __future__ import annotations

from typing import Any

from samsa.registry import errors
from samsa.registry.api_http import PendingWrite, Request, error_response, json_response
from samsa.registry.api_reads import parse_version, register_request, valid_subject
from samsa.registry.compatibility import LEVELS, MODES
from samsa.registry.resolver import SchemaResolver
from samsa.registry.store import RegistryState
from samsa.registry.writes import (
    Write,
    delete_config,
    delete_mode,
    delete_subject,
    delete_version,
    register,
    set_config,
    set_mode,
)


class Writes:
    def __init__(self, state: RegistryState, resolver: SchemaResolver) -> None:
        self.state = state
        self.resolver = resolver

    def _pending(self, write: Write) -> PendingWrite:
        def finish() -> Any:
            try:
                return json_response(write.answer(self.state))
            except errors.RegistryError as e:
                return error_response(e)

        return PendingWrite(write.records, finish)

    def register(self, req: Request, body: Any, subject: str) -> Any:
        valid_subject(subject)
        result = register(
            self.state, self.resolver, subject, register_request(body), req.flag("normalize")
        )
        return {"id": result} if isinstance(result, int) else self._pending(result)

    def delete_version(self, req: Request, body: Any, subject: str, version: str) -> Any:
        number = parse_version(version)
        return self._pending(delete_version(self.state, subject, number, req.flag("permanent")))

    def delete_subject(self, req: Request, body: Any, subject: str) -> Any:
        return self._pending(delete_subject(self.state, subject, req.flag("permanent")))

    def put_config(self, req: Request, body: Any, subject: str | None) -> Any:
        if subject is not None:
            valid_subject(subject)
        if not isinstance(body, dict):
            raise errors.bad_request("The config body must be a JSON object")
        level = body.get("compatibility", body.get("compatibilityLevel"))
        if not isinstance(level, str) or level.upper() not in LEVELS:
            raise errors.invalid_compatibility_level()
        normalize = body.get("normalize")
        if normalize is not None and not isinstance(normalize, bool):
            raise errors.bad_request("normalize must be a boolean")
        others = {"normalize": normalize}
        return self._pending(set_config(self.state, subject, level.upper(), others))

    def delete_config(self, req: Request, body: Any, subject: str | None) -> Any:
        return self._pending(delete_config(self.state, subject))

    def put_mode(self, req: Request, body: Any, subject: str | None) -> Any:
        if subject is not None:
            valid_subject(subject)
        mode = body.get("mode") if isinstance(body, dict) else None
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise errors.invalid_mode(str(mode))
        return self._pending(set_mode(self.state, subject, mode.upper(), req.flag("force")))

    def delete_mode(self, req: Request, body: Any, subject: str) -> Any:
        return self._pending(delete_mode(self.state, subject))
