"""Commands that change the registry: checked against the state, planned as ``_schemas`` records.

Each command validates against the current state and returns a ``Write``: the
records to append, and how to answer once they have been read back and applied.
Writing is the I/O layer's job; it must run one write at a time (on the primary,
after reading ``_schemas`` to its end), because each plan is made against the
state as it stands.  The rules follow Confluent's ``KafkaSchemaRegistry``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samsa.registry import errors
from samsa.registry.compatibility import DEFAULT_LEVEL, DEFAULT_MODE, incompatibilities
from samsa.registry.records import (
    Reference,
    RegistryKey,
    SchemaValue,
    config_value,
    delete_subject_value,
    mode_value,
)
from samsa.registry.resolver import SchemaResolver
from samsa.registry.store import RegistryState


@dataclass(frozen=True)
class Record:
    """One record for ``_schemas``; a None value is a tombstone."""

    key: bytes
    value: bytes | None


@dataclass
class Write:
    records: list[Record]
    answer: Callable[[RegistryState], Any]  # the JSON body once the records are applied


@dataclass(frozen=True)
class RegisterRequest:
    schema: str
    schema_type: str = "AVRO"
    references: tuple[Reference, ...] = ()
    schema_id: int | None = None  # only in IMPORT mode
    version: int | None = None  # only in IMPORT mode


def mode_of(state: RegistryState, subject: str | None) -> str:
    found = state.modes.get(subject) if subject is not None else None
    return found or state.modes.get(None) or DEFAULT_MODE


def level_of(state: RegistryState, subject: str | None) -> str:
    config = (state.configs.get(subject) if subject is not None else None) or state.configs.get(
        None
    )
    level = (config or {}).get("compatibilityLevel")
    return level if isinstance(level, str) else DEFAULT_LEVEL


def _normalize_on(state: RegistryState, subject: str) -> bool:
    config = state.configs.get(subject) or state.configs.get(None) or {}
    return bool(config.get("normalize"))


def _refuse_read_only(state: RegistryState, subject: str) -> None:
    if mode_of(state, subject) in ("READONLY", "READONLY_OVERRIDE"):
        raise errors.operation_not_permitted(f"Subject {subject} is in read-only mode")


def register(
    state: RegistryState,
    resolver: SchemaResolver,
    subject: str,
    request: RegisterRequest,
    normalize: bool,
) -> Write | int:
    """Registers a schema; an int is the id of the same schema already registered here."""
    _refuse_read_only(state, subject)
    mode = mode_of(state, subject)
    if request.schema_id is not None and mode != "IMPORT":
        raise errors.operation_not_permitted(f"Subject {subject} is not in import mode")
    if request.schema_id is None and mode != "READWRITE":
        raise errors.operation_not_permitted(f"Subject {subject} is not in read-write mode")
    if not request.schema.strip():
        raise errors.invalid_schema("Empty schema")
    parsed = resolver.parse(
        request.schema_type, request.schema, request.references, is_new=mode != "IMPORT"
    )
    if normalize or _normalize_on(state, subject):
        parsed = parsed.normalized()
    text = parsed.canonical()
    every = state.versions(subject, include_deleted=True)
    live = [v for v in every if not v.deleted]
    known_id = state.id_for_text(request.schema_type, text, request.references)
    if known_id is None:  # the same schema under this subject, as Confluent wrote its text
        known_id = next(
            (v.id for v in reversed(live) if _same(resolver, v, parsed, request, normalize)), None
        )
    already = known_id is not None and request.schema_id in (None, known_id)
    if already and request.version is None and any(v.id == known_id for v in live):
        assert known_id is not None
        return known_id
    schema_id = request.schema_id if request.schema_id is not None else known_id
    if mode != "IMPORT":
        previous = [(v.version, resolver.parse_stored(v)) for v in live]
        problems = incompatibilities(level_of(state, subject), parsed, previous)
        if problems:
            raise errors.incompatible_schema(
                "Schema being registered is incompatible with an earlier schema for subject "
                f'"{subject}", details: [{", ".join(problems)}]'
            )
    next_version = max((v.version for v in every), default=0) + 1
    version = request.version if request.version is not None else next_version
    if request.version is not None and mode != "IMPORT" and version != next_version:
        raise errors.invalid_schema("Version is not one more than previous version")
    if schema_id is None:
        schema_id = state.next_id()
    else:
        holder = state.schema_by_id(schema_id)
        if holder is not None and holder.schema != text:
            raise errors.id_does_not_match(
                f"Schema already registered with id {schema_id} with a different schema"
            )
    records = [
        Record(state.raw_key(RegistryKey.schema(subject, old.version)), None)
        for old in every
        if old.deleted and old.id == schema_id and old.version < version
    ]
    value = SchemaValue(subject, version, schema_id, text, request.schema_type, request.references)
    records.append(Record(state.raw_key(RegistryKey.schema(subject, version)), value.encode()))

    def answer(after: RegistryState) -> Any:
        stored = after.version(subject, version)
        if stored is None or stored.id != schema_id:
            raise errors.store_error("Error while registering the schema in the backend store")
        return {"id": schema_id}

    return Write(records, answer)


def _same(
    resolver: SchemaResolver, stored: SchemaValue, parsed: Any, request: Any, norm: bool
) -> bool:
    if stored.schema_type != request.schema_type or stored.references != request.references:
        return False
    try:
        other = resolver.parse_stored(stored)
    except errors.RegistryError:
        return False
    return (other.normalized() if norm else other).canonical() == parsed.canonical()


def _check_not_referenced(state: RegistryState, subject: str, version: int) -> None:
    if state.referenced_by(subject, version):
        raise errors.reference_exists(
            f"{{magic=1,keytype=SCHEMA,subject={subject},version={version}}}"
        )


def delete_version(
    state: RegistryState, subject: str, version: int | None, permanent: bool
) -> Write:
    """Soft or permanent delete of one version (``None`` = the latest live one)."""
    _refuse_read_only(state, subject)
    if not state.versions(subject, include_deleted=True):
        raise errors.subject_not_found(subject)
    if version is None:
        latest = state.latest(subject)
        if latest is None:
            raise errors.subject_not_found(subject)
        version = latest.version
    stored = state.version(subject, version)
    if stored is None:
        raise errors.version_not_found(version)
    if permanent and not stored.deleted:
        raise errors.version_not_soft_deleted(subject, version)
    if not permanent and stored.deleted:
        raise errors.version_soft_deleted(subject, version)
    _check_not_referenced(state, subject, version)
    key = state.raw_key(RegistryKey.schema(subject, version))
    if permanent:
        records = [Record(key, None)]
    else:
        deleted = SchemaValue(**{**stored.__dict__, "deleted": True})
        records = [Record(key, deleted.encode())]
        if len(state.versions(subject)) == 1:  # the last live version: drop its settings
            records += _subject_settings_tombstones(state, subject)
    return Write(records, lambda _after: version)


def delete_subject(state: RegistryState, subject: str, permanent: bool) -> Write:
    _refuse_read_only(state, subject)
    every = state.versions(subject, include_deleted=True)
    live = [v for v in every if not v.deleted]
    if not every:
        raise errors.subject_not_found(subject)
    if permanent and live:
        raise errors.subject_not_soft_deleted(subject)
    if not permanent and not live:
        raise errors.subject_soft_deleted(subject)
    targets = every if permanent else live
    for stored in targets:
        _check_not_referenced(state, subject, stored.version)
    versions = [v.version for v in targets]
    if permanent:
        records = [Record(state.raw_key(RegistryKey.schema(subject, v)), None) for v in versions]
    else:
        key = state.raw_key(RegistryKey.delete_subject(subject))
        records = [Record(key, delete_subject_value(subject, versions[-1]))]
        records += _subject_settings_tombstones(state, subject)
    return Write(records, lambda _after: versions)


def _subject_settings_tombstones(state: RegistryState, subject: str) -> list[Record]:
    records = []
    if subject in state.configs:
        records.append(Record(state.raw_key(RegistryKey.config(subject)), None))
    if subject in state.modes:
        records.append(Record(state.raw_key(RegistryKey.mode(subject)), None))
    return records


def set_config(
    state: RegistryState, subject: str | None, level: str, others: dict[str, Any]
) -> Write:
    key = state.raw_key(RegistryKey.config(subject))
    body = {"compatibility": level, **{k: v for k, v in others.items() if v is not None}}
    return Write([Record(key, config_value(level, others))], lambda _after: body)


def delete_config(state: RegistryState, subject: str | None) -> Write:
    old = state.configs.get(subject)
    if subject is not None and old is None:
        if not state.versions(subject, include_deleted=True):
            raise errors.subject_not_found(subject)
        raise errors.subject_compatibility_not_configured(subject)
    shown = config_body(old or {"compatibilityLevel": DEFAULT_LEVEL})
    key = state.raw_key(RegistryKey.config(subject))
    return Write([Record(key, None)] if old is not None else [], lambda _after: shown)


def config_body(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k != "subject" and v is not None}


def set_mode(state: RegistryState, subject: str | None, mode: str, force: bool) -> Write:
    if mode == "IMPORT" and not force:
        has_schemas = (
            bool(state.versions(subject, include_deleted=True))
            if subject is not None
            else bool(state.subject_names(include_deleted=True))
        )
        if has_schemas:
            raise errors.operation_not_permitted("Cannot import since found existing subjects")
    key = state.raw_key(RegistryKey.mode(subject))
    return Write([Record(key, mode_value(mode))], lambda _after: {"mode": mode})


def delete_mode(state: RegistryState, subject: str) -> Write:
    old = state.modes.get(subject)
    if old is None:
        if not state.versions(subject, include_deleted=True):
            raise errors.subject_not_found(subject)
        raise errors.subject_mode_not_configured(subject)
    key = state.raw_key(RegistryKey.mode(subject))
    return Write([Record(key, None)], lambda _after: {"mode": old})
