"""The registry's state, a pure state machine fed by the records of ``_schemas``.

Every node reads ``_schemas`` from the start and applies each record here, in
offset order, the way Confluent's ``KafkaStoreReaderThread`` feeds its
``KafkaStoreMessageHandler``: the same records give the same state on every node.
Nothing here writes; ``writes.py`` plans the records a command needs, and the
answer to the command is read from this state once they have been applied.

Schema ids are global and never reused.  The next id is one past the highest id
any SCHEMA record has ever carried, including versions since deleted for good
(Confluent's ``IncrementalIdGenerator`` does the same): a permanent delete writes a
tombstone, but the record with the id was read before it, so the id stays taken.
A new primary must have read ``_schemas`` to its end before it hands out ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from samsa.registry.records import (
    RecordFormatError,
    Reference,
    RegistryKey,
    SchemaValue,
    decode_json_value,
)


@dataclass
class SubjectState:
    versions: dict[int, SchemaValue] = field(default_factory=dict)


@dataclass
class RegistryState:
    """Subjects, versions, ids, configs and modes as ``_schemas`` last said them."""

    subjects: dict[str, SubjectState] = field(default_factory=dict)
    configs: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    modes: dict[str | None, str] = field(default_factory=dict)
    max_id: int = 0
    applied_offset: int = -1
    # id -> the (subject, version) pairs that carry it; text -> id for lookups.
    _by_id: dict[int, set[tuple[str, int]]] = field(default_factory=dict)
    _ids_by_text: dict[tuple[str, str, tuple[Reference, ...]], int] = field(default_factory=dict)
    # The exact key bytes each logical key was last written with: compaction keeps
    # the newest record per byte string, so overwrites and tombstones reuse them.
    _raw_keys: dict[tuple[str, str | None, int | None], bytes] = field(default_factory=dict)

    # -- applying records ---------------------------------------------------------

    def apply(self, key: bytes, value: bytes | None, offset: int | None = None) -> str | None:
        """Apply one record; returns why it was skipped, or None when it was applied.

        Malformed records are skipped, not fatal: Confluent's reader logs and goes on,
        and one bad record must not take the registry down on every node.
        """
        if offset is not None:
            self.applied_offset = offset
        try:
            parsed_key = RegistryKey.decode(key)
        except RecordFormatError as e:
            return f"skipped a record with a bad key: {e}"
        self._raw_keys[parsed_key.logical()] = key
        try:
            return self._apply(parsed_key, value)
        except RecordFormatError as e:
            return f"skipped {parsed_key.keytype} record for {parsed_key.subject!r}: {e}"

    def _apply(self, key: RegistryKey, value: bytes | None) -> str | None:
        kind = key.keytype
        if kind == "SCHEMA":
            assert key.subject is not None and key.version is not None
            if value is None:
                self._remove_version(key.subject, key.version)
                return None
            return self._put_version(SchemaValue.decode(value))
        if kind == "CONFIG":
            if value is None:
                self.configs.pop(key.subject, None)
            else:
                self.configs[key.subject] = decode_json_value(value, "CONFIG value")
            return None
        if kind == "MODE":
            if value is None:
                self.modes.pop(key.subject, None)
            else:
                mode = decode_json_value(value, "MODE value").get("mode")
                if not isinstance(mode, str):
                    raise RecordFormatError("MODE value has no mode")
                self.modes[key.subject] = mode
            return None
        if kind == "DELETE_SUBJECT" and value is not None:
            obj = decode_json_value(value, "DELETE_SUBJECT value")
            subject, upto = obj.get("subject", key.subject), obj.get("version")
            if not isinstance(subject, str) or not isinstance(upto, int):
                raise RecordFormatError("DELETE_SUBJECT value needs subject and version")
            for version, stored in self._versions(subject).items():
                if version <= upto:
                    stored.deleted = True
            return None
        if kind == "CLEAR_SUBJECT" and value is not None:
            obj = decode_json_value(value, "CLEAR_SUBJECT value")
            subject = obj.get("subject", key.subject)
            if not isinstance(subject, str):
                raise RecordFormatError("CLEAR_SUBJECT value needs a subject")
            for version in list(self._versions(subject)):
                self._remove_version(subject, version)
            return None
        return None  # NOOP, CONTEXT, and tombstones of the marker keys

    def _put_version(self, stored: SchemaValue) -> str | None:
        holders = self._by_id.get(stored.id)
        if holders:
            subject, version = next(iter(holders))
            existing = self.subjects[subject].versions[version]
            if existing.schema != stored.schema or existing.schema_type != stored.schema_type:
                # Confluent's validateUpdate refuses a second schema under a used id.
                return f"skipped schema id {stored.id} for {stored.subject!r}: id already in use"
        self._remove_version(stored.subject, stored.version)
        self.subjects.setdefault(stored.subject, SubjectState()).versions[stored.version] = stored
        self._by_id.setdefault(stored.id, set()).add((stored.subject, stored.version))
        self._ids_by_text.setdefault(self._text_key(stored), stored.id)
        self.max_id = max(self.max_id, stored.id)
        return None

    def _remove_version(self, subject: str, version: int) -> None:
        state = self.subjects.get(subject)
        old = state.versions.pop(version, None) if state else None
        if old is None:
            return
        holders = self._by_id.get(old.id, set())
        holders.discard((subject, version))
        if not holders:
            self._by_id.pop(old.id, None)
            if self._ids_by_text.get(self._text_key(old)) == old.id:
                del self._ids_by_text[self._text_key(old)]
        if state is not None and not state.versions:
            del self.subjects[subject]

    @staticmethod
    def _text_key(stored: SchemaValue) -> tuple[str, str, tuple[Reference, ...]]:
        return (stored.schema_type, stored.schema, stored.references)

    def _versions(self, subject: str) -> dict[int, SchemaValue]:
        state = self.subjects.get(subject)
        return state.versions if state else {}

    # -- reading state --------------------------------------------------------------

    def subject_names(self, include_deleted: bool = False) -> list[str]:
        return sorted(
            name
            for name, state in self.subjects.items()
            if include_deleted or any(not v.deleted for v in state.versions.values())
        )

    def versions(self, subject: str, include_deleted: bool = False) -> list[SchemaValue]:
        """The subject's versions in ascending order."""
        found = self._versions(subject)
        return [found[v] for v in sorted(found) if include_deleted or not found[v].deleted]

    def version(self, subject: str, version: int) -> SchemaValue | None:
        return self._versions(subject).get(version)

    def latest(self, subject: str, include_deleted: bool = False) -> SchemaValue | None:
        found = self.versions(subject, include_deleted)
        return found[-1] if found else None

    def schema_by_id(self, schema_id: int) -> SchemaValue | None:
        """A version carrying the id, a live one first (soft deletes keep ids readable)."""
        holders = sorted(self._by_id.get(schema_id, ()))
        found = [self.subjects[s].versions[v] for s, v in holders]
        live = [v for v in found if not v.deleted]
        return (live or found)[0] if found else None

    def holders_of(self, schema_id: int, include_deleted: bool = False) -> list[SchemaValue]:
        found = [self.subjects[s].versions[v] for s, v in sorted(self._by_id.get(schema_id, ()))]
        return [v for v in found if include_deleted or not v.deleted]

    def all_ids(self) -> list[int]:
        return sorted(self._by_id)

    def id_for_text(
        self, schema_type: str, text: str, references: tuple[Reference, ...]
    ) -> int | None:
        return self._ids_by_text.get((schema_type, text, references))

    def referenced_by(self, subject: str, version: int) -> list[int]:
        """Ids of live schemas whose references name this subject's version."""
        return sorted(
            {
                stored.id
                for stored in self.all_versions()
                if not stored.deleted
                for ref in stored.references
                if (ref.subject, ref.version) == (subject, version)
            }
        )

    def all_versions(self) -> Iterator[SchemaValue]:
        for state in self.subjects.values():
            yield from state.versions.values()

    def next_id(self) -> int:
        return self.max_id + 1

    def raw_key(self, key: RegistryKey) -> bytes:
        """The bytes to write for ``key``: those it was last written with, if any."""
        return self._raw_keys.get(key.logical()) or key.encode()
