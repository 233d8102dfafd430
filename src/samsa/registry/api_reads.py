"""The API's reading endpoints, and the request parsing both sides share."""

from __future__ import annotations

from typing import Any

from samsa.registry import errors
from samsa.registry.api_http import Request, Response
from samsa.registry.compatibility import DEFAULT_LEVEL, DEFAULT_MODE, incompatibilities
from samsa.registry.formats import SCHEMA_TYPES, ParsedSchema
from samsa.registry.records import Reference, SchemaValue
from samsa.registry.resolver import SchemaResolver
from samsa.registry.store import RegistryState
from samsa.registry.writes import RegisterRequest, config_body, level_of, mode_of

MAX_VERSION = 2**31 - 1


def valid_subject(subject: str) -> None:
    if not subject.strip() or any(ord(c) < 32 for c in subject):
        raise errors.invalid_subject(subject)


def parse_version(text: str) -> int | None:
    """A version number, or None for the latest ("latest" or -1)."""
    if text == "latest" or text == "-1":
        return None
    try:
        number = int(text)
    except ValueError:
        raise errors.invalid_version(text) from None
    if not 1 <= number <= MAX_VERSION:
        raise errors.invalid_version(text)
    return number


def register_request(body: Any) -> RegisterRequest:
    if not isinstance(body, dict):
        raise errors.bad_request("The request body must be a JSON object")
    schema = body.get("schema", "")
    schema_type = body.get("schemaType") or "AVRO"
    if not isinstance(schema, str):
        raise errors.bad_request("schema must be a string")
    if not isinstance(schema_type, str) or schema_type.upper() not in SCHEMA_TYPES:
        raise errors.invalid_schema(f"Invalid schema type {schema_type}")
    try:
        refs = tuple(Reference.from_json(r) for r in body.get("references") or ())
    except ValueError as e:
        raise errors.bad_request(f"Invalid references: {e}") from e
    numbers = {}
    for name in ("id", "version"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise errors.bad_request(f"{name} must be an integer")
        numbers[name] = value if value is None or value >= 0 else None
    return RegisterRequest(schema, schema_type.upper(), refs, numbers["id"], numbers["version"])


def schema_entity(stored: SchemaValue, text: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"subject": stored.subject, "version": stored.version, "id": stored.id}
    out.update(schema_string(stored, text))
    for name in ("metadata", "ruleSet"):
        if stored.extra.get(name) is not None:
            out[name] = stored.extra[name]
    return out


def schema_string(stored: SchemaValue, text: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if stored.schema_type != "AVRO":
        out["schemaType"] = stored.schema_type
    if stored.references:
        out["references"] = [r.to_json() for r in stored.references]
    out["schema"] = stored.schema if text is None else text
    return out


class Reads:
    def __init__(self, state: RegistryState, resolver: SchemaResolver) -> None:
        self.state = state
        self.resolver = resolver

    def _formatted(self, stored: SchemaValue, req: Request) -> str | None:
        fmt = req.query.get("format")
        if not fmt:
            return None
        return self.resolver.parse_stored(stored).formatted(fmt)

    def _version(self, subject: str, version: str, deleted: bool) -> SchemaValue:
        number = parse_version(version)
        if not self.state.versions(subject, include_deleted=True):
            raise errors.subject_not_found(subject)
        if number is None:
            found = self.state.latest(subject, include_deleted=deleted)
            if found is None:
                raise errors.subject_not_found(subject)
            return found
        found = self.state.version(subject, number)
        if found is None or (found.deleted and not deleted):
            raise errors.version_not_found(number)
        return found

    def schema_types(self, req: Request, body: Any) -> Any:
        return ["JSON", "PROTOBUF", "AVRO"]

    def list_schemas(self, req: Request, body: Any) -> Any:
        prefix, deleted = req.query.get("subjectPrefix", ""), req.flag("deleted")
        found: list[SchemaValue] = []
        for subject in self.state.subject_names(include_deleted=deleted):
            if subject.startswith(prefix):
                versions = self.state.versions(subject, include_deleted=deleted)
                found += versions[-1:] if req.flag("latestOnly") else versions
        offset, limit = _int(req, "offset", 0), _int(req, "limit", -1)
        found = found[offset:] if limit < 0 else found[offset : offset + limit]
        return [schema_entity(v) for v in found]

    def _by_id(self, schema_id: str) -> SchemaValue:
        try:
            number = int(schema_id)
        except ValueError:
            raise errors.schema_not_found() from None
        stored = self.state.schema_by_id(number)
        if stored is None:
            raise errors.schema_not_found(number)
        return stored

    def schema_by_id(self, req: Request, body: Any, schema_id: str) -> Any:
        stored = self._by_id(schema_id)
        return schema_string(stored, self._formatted(stored, req))

    def raw_schema_by_id(self, req: Request, body: Any, schema_id: str) -> Any:
        stored = self._by_id(schema_id)
        return _raw(self._formatted(stored, req) or stored.schema)

    def subjects_of_id(self, req: Request, body: Any, schema_id: str) -> Any:
        holders = self.state.holders_of(self._by_id(schema_id).id, req.flag("deleted"))
        return sorted({v.subject for v in holders})

    def versions_of_id(self, req: Request, body: Any, schema_id: str) -> Any:
        holders = self.state.holders_of(self._by_id(schema_id).id, req.flag("deleted"))
        return [{"subject": v.subject, "version": v.version} for v in holders]

    def list_subjects(self, req: Request, body: Any) -> Any:
        prefix = req.query.get("subjectPrefix", "")
        names = self.state.subject_names(include_deleted=req.flag("deleted"))
        return [name for name in names if name.startswith(prefix)]

    def list_versions(self, req: Request, body: Any, subject: str) -> Any:
        versions = self.state.versions(subject, include_deleted=req.flag("deleted"))
        if not versions:
            raise errors.subject_not_found(subject)
        return [v.version for v in versions]

    def get_version(self, req: Request, body: Any, subject: str, version: str) -> Any:
        stored = self._version(subject, version, req.flag("deleted"))
        return schema_entity(stored, self._formatted(stored, req))

    def raw_version(self, req: Request, body: Any, subject: str, version: str) -> Any:
        stored = self._version(subject, version, req.flag("deleted"))
        return _raw(self._formatted(stored, req) or stored.schema)

    def referenced_by(self, req: Request, body: Any, subject: str, version: str) -> Any:
        stored = self._version(subject, version, True)
        return self.state.referenced_by(subject, stored.version)

    def lookup(self, req: Request, body: Any, subject: str) -> Any:
        deleted = req.flag("deleted")
        candidates = self.state.versions(subject, include_deleted=deleted)
        if not candidates:
            raise errors.subject_not_found(subject)
        request = register_request(body)
        parsed = self.resolver.parse(
            request.schema_type, request.schema, request.references, is_new=False
        )
        wanted = (parsed.normalized() if req.flag("normalize") else parsed).canonical()
        for stored in reversed(candidates):
            if stored.schema_type != request.schema_type:
                continue
            if stored.references != request.references:
                continue
            if stored.schema == wanted or self._canonical(stored, req) == wanted:
                return schema_entity(stored)
        raise errors.schema_not_found()

    def _canonical(self, stored: SchemaValue, req: Request) -> str | None:
        try:
            other = self.resolver.parse_stored(stored)
        except errors.RegistryError:
            return None
        return (other.normalized() if req.flag("normalize") else other).canonical()

    def get_config(self, req: Request, body: Any, subject: str | None) -> Any:
        config = self.state.configs.get(subject)
        if config is None and subject is not None and not req.flag("defaultToGlobal"):
            raise errors.subject_compatibility_not_configured(subject)
        if config is None:
            config = self.state.configs.get(None) or {"compatibilityLevel": DEFAULT_LEVEL}
        return config_body(config)

    def get_mode(self, req: Request, body: Any, subject: str | None) -> Any:
        if subject is None:
            return {"mode": self.state.modes.get(None) or DEFAULT_MODE}
        mode = self.state.modes.get(subject)
        if mode is None and not req.flag("defaultToGlobal"):
            raise errors.subject_mode_not_configured(subject)
        return {"mode": mode or mode_of(self.state, None)}

    def check_compatibility(
        self, req: Request, body: Any, subject: str, version: str | None
    ) -> Any:
        request = register_request(body)
        parsed = self.resolver.parse(
            request.schema_type, request.schema, request.references, is_new=True
        )
        if req.flag("normalize"):
            parsed = parsed.normalized()
        level = level_of(self.state, subject)
        if version is None:
            previous = self.state.versions(subject)
        else:
            previous = [self._version(subject, version, deleted=False)]
            level = level.removesuffix("_TRANSITIVE")
        parsed_previous: list[tuple[int, ParsedSchema]] = [
            (v.version, self.resolver.parse_stored(v)) for v in previous
        ]
        messages = incompatibilities(level, parsed, parsed_previous)
        answer: dict[str, Any] = {"is_compatible": not messages}
        if req.flag("verbose"):
            answer["messages"] = messages
        return answer


def _raw(text: str) -> Response:
    from samsa.registry.api_http import CONTENT_TYPE

    return Response(200, CONTENT_TYPE, text.encode())


def _int(req: Request, name: str, default: int) -> int:
    try:
        return int(req.query.get(name, default))
    except ValueError:
        return default
