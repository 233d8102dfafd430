"""The records of the ``_schemas`` topic, in Confluent Schema Registry's exact JSON format.

Keys are JSON objects whose ``keytype`` says what the value is (Confluent's
``SchemaRegistryKey`` subclasses, serialized by Jackson in their declared
property order, compact, ``null`` members left out):

    {"keytype":"SCHEMA","subject":"s","version":1,"magic":1}
    {"keytype":"CONFIG","subject":"s","magic":0}   (global: no "subject")
    {"keytype":"MODE","subject":"s","magic":0}     (global: no "subject")
    {"keytype":"DELETE_SUBJECT","subject":"s","magic":0}
    {"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}
    {"keytype":"NOOP","magic":0}

Values are ``SchemaValue``, ``ConfigValue``, ``ModeValue``, ``DeleteSubjectValue``
and ``ClearSubjectValue``; a null value (tombstone) removes the key's state, which
is how permanent deletes and config/mode deletes are written.  Members this code
does not interpret (``metadata``, ``ruleSet``, ``guid``, ...) are kept and written
back unchanged, so a registry's data moves in and out of Confluent without loss.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

KEY_TYPES = ("SCHEMA", "CONFIG", "MODE", "NOOP", "DELETE_SUBJECT", "CLEAR_SUBJECT", "CONTEXT")


class RecordFormatError(ValueError):
    """A ``_schemas`` record that is not in Confluent's format (skipped, as Confluent does)."""


def dumps(obj: object) -> bytes:
    """Jackson's default output: compact, UTF-8, no ASCII escaping."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True)
class Reference:
    """A schema's reference to another subject's version, under the name it imports it by."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "subject": self.subject, "version": self.version}

    @classmethod
    def from_json(cls, obj: object) -> Reference:
        if not isinstance(obj, dict):
            raise ValueError("a reference must be an object")
        name, subject, version = obj.get("name"), obj.get("subject"), obj.get("version")
        if not isinstance(name, str) or not isinstance(subject, str):
            raise ValueError("a reference needs a string name and subject")
        if isinstance(version, bool) or not isinstance(version, int):
            raise ValueError("a reference needs an integer version")
        return cls(name, subject, version)


@dataclass(frozen=True)
class RegistryKey:
    """One key of ``_schemas``: which piece of state its record sets."""

    keytype: str
    subject: str | None = None
    version: int | None = None
    magic: int = 0

    @classmethod
    def schema(cls, subject: str, version: int) -> RegistryKey:
        return cls("SCHEMA", subject, version, magic=1)

    @classmethod
    def config(cls, subject: str | None) -> RegistryKey:
        return cls("CONFIG", subject)

    @classmethod
    def mode(cls, subject: str | None) -> RegistryKey:
        return cls("MODE", subject)

    @classmethod
    def delete_subject(cls, subject: str) -> RegistryKey:
        return cls("DELETE_SUBJECT", subject)

    @classmethod
    def clear_subject(cls, subject: str) -> RegistryKey:
        return cls("CLEAR_SUBJECT", subject)

    @classmethod
    def noop(cls) -> RegistryKey:
        return cls("NOOP")

    def logical(self) -> tuple[str, str | None, int | None]:
        """What the key identifies, whatever bytes spelled it (compaction is by bytes)."""
        return (self.keytype, self.subject, self.version)

    def encode(self) -> bytes:
        obj: dict[str, object] = {"keytype": self.keytype}
        if self.subject:
            obj["subject"] = self.subject
        if self.keytype == "SCHEMA":
            obj["version"] = self.version
        obj["magic"] = self.magic
        return dumps(obj)

    @classmethod
    def decode(cls, data: bytes) -> RegistryKey:
        obj = _load_object(data, "key")
        keytype = obj.get("keytype")
        if keytype not in KEY_TYPES:
            raise RecordFormatError(f"unknown keytype {keytype!r}")
        subject = obj.get("subject")
        if subject is not None and not isinstance(subject, str):
            raise RecordFormatError("key subject is not a string")
        magic = obj.get("magic", 0)
        if isinstance(magic, bool) or not isinstance(magic, int):
            raise RecordFormatError("key magic is not an integer")
        version = obj.get("version")
        if keytype == "SCHEMA":
            if not subject or isinstance(version, bool) or not isinstance(version, int):
                raise RecordFormatError("SCHEMA key needs a subject and an integer version")
        else:
            version = None
        return cls(keytype, subject, version, magic)


@dataclass
class SchemaValue:
    """Confluent's ``SchemaValue``: one version of one subject."""

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = "AVRO"
    references: tuple[Reference, ...] = ()
    deleted: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def encode(self) -> bytes:
        obj: dict[str, object] = {"subject": self.subject, "version": self.version, "id": self.id}
        if self.schema_type != "AVRO":
            obj["schemaType"] = self.schema_type
        if self.references:
            obj["references"] = [r.to_json() for r in self.references]
        obj["schema"] = self.schema
        obj["deleted"] = self.deleted
        obj.update(self.extra)
        return dumps(obj)

    @classmethod
    def decode(cls, data: bytes) -> SchemaValue:
        obj = _load_object(data, "SCHEMA value")
        subject, version, schema_id = obj.get("subject"), obj.get("version"), obj.get("id")
        schema = obj.get("schema")
        if not isinstance(subject, str) or not isinstance(schema, str):
            raise RecordFormatError("SCHEMA value needs a string subject and schema")
        for number in (version, schema_id):
            if isinstance(number, bool) or not isinstance(number, int):
                raise RecordFormatError("SCHEMA value needs integer version and id")
        assert isinstance(version, int) and isinstance(schema_id, int)
        schema_type = obj.get("schemaType") or "AVRO"
        if not isinstance(schema_type, str):
            raise RecordFormatError("schemaType is not a string")
        try:
            refs = tuple(Reference.from_json(r) for r in obj.get("references") or ())
        except (ValueError, TypeError) as e:
            raise RecordFormatError(f"bad references: {e}") from e
        known = {"subject", "version", "id", "schema", "schemaType", "references", "deleted"}
        extra = {k: v for k, v in obj.items() if k not in known}
        deleted = bool(obj.get("deleted", False))
        return cls(subject, version, schema_id, schema, schema_type, refs, deleted, extra)


def decode_json_value(data: bytes, what: str) -> dict[str, Any]:
    """A CONFIG, MODE, DELETE_SUBJECT or CLEAR_SUBJECT value, as its JSON object."""
    return _load_object(data, what)


def config_value(compatibility: str, others: dict[str, Any] | None = None) -> bytes:
    obj: dict[str, Any] = {"compatibilityLevel": compatibility}
    obj.update({k: v for k, v in (others or {}).items() if v is not None})
    return dumps(obj)


def mode_value(mode: str) -> bytes:
    return dumps({"mode": mode})


def delete_subject_value(subject: str, version: int) -> bytes:
    return dumps({"subject": subject, "version": version})


def _load_object(data: bytes, what: str) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise RecordFormatError(f"{what} is not JSON: {e}") from e
    if not isinstance(obj, dict):
        raise RecordFormatError(f"{what} is not a JSON object")
    return obj
