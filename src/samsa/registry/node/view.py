"""What the rest of the broker may ask of this node's registry, in microseconds.

The seam for broker-side validation (``confluent.value.schema.validation``):
the produce path asks whether the schema id a record's header carries is
registered for the subject the topic's naming strategy gives, without
touching HTTP or Kafka (``refusal`` is replication's ``SchemaIdCheck``).
The answers come from the state this node replays from ``_schemas``
(``mirror``), on the event loop, where the state changes.

How each strategy is checked, without reading a record's body:

* TopicNameStrategy (the default): the id is a live version of
  ``<topic>-value`` (``<topic>-key`` for keys).
* RecordNameStrategy and TopicRecordNameStrategy: the subject is named after
  the record's name, which only its body could tell.  The schema with that
  id is read instead (parsed once per id, ids never change meaning): the id
  must be a live version of a subject named after a record name the schema
  itself defines -- Avro's top-level full name, any of a Protobuf file's
  messages, a JSON Schema's ``title`` -- bare for RecordNameStrategy,
  ``<topic>-<name>`` for TopicRecordNameStrategy.  A producer using the
  strategy registers exactly such a subject; an id registered only under
  other subjects is refused.

Soft-deleted versions do not count: deleting a version retires its id for
new records, as it does for serializers that look it up.
"""

from __future__ import annotations

from samsa.registry.errors import RegistryError
from samsa.registry.resolver import SchemaResolver
from samsa.registry.store import RegistryState

TOPIC_NAME = "TopicNameStrategy"
RECORD_NAME = "RecordNameStrategy"
TOPIC_RECORD_NAME = "TopicRecordNameStrategy"


class RegistryView:
    def __init__(self, state: RegistryState) -> None:
        self._state = state
        self._resolver = SchemaResolver(state)
        self._record_names: dict[int, tuple[str, ...]] = {}

    def is_registered(self, schema_id: int, subject: str) -> bool:
        """A live (not soft-deleted) version of ``subject`` carries ``schema_id``."""
        return any(v.subject == subject for v in self._state.holders_of(schema_id))

    def is_known_id(self, schema_id: int) -> bool:
        """Some subject, deleted or not, holds ``schema_id``."""
        return self._state.schema_by_id(schema_id) is not None

    def subjects_of(self, schema_id: int) -> list[str]:
        return sorted({v.subject for v in self._state.holders_of(schema_id)})

    def refusal(self, schema_id: int, topic: str, is_key: bool, strategy: str) -> str | None:
        """Why a key (value) of ``topic`` may not carry ``schema_id``; None when it may.
        ``strategy``: a subject name strategy's class name, short or in full."""
        holders = set(self.subjects_of(schema_id))
        kind = "key" if is_key else "value"
        short = strategy.rsplit(".", 1)[-1]
        if short == TOPIC_NAME:
            subject = f"{topic}-{kind}"
            if subject in holders:
                return None
            return f"it is not registered under subject {subject}" + _elsewhere(holders)
        if not holders:
            return "no subject holds it" + _elsewhere(holders)
        try:
            names = self.record_names(schema_id)
        except RegistryError as exc:
            return f"its record names cannot be read ({exc.message})"
        allowed = set(names) if short == RECORD_NAME else {f"{topic}-{n}" for n in names}
        if holders & allowed:
            return None
        wanted = " or ".join(sorted(allowed)) or "(the schema defines no record name)"
        return f"{short} wants it under subject {wanted}" + _elsewhere(holders)

    def record_names(self, schema_id: int) -> tuple[str, ...]:
        """The record names the schema with ``schema_id`` defines (cached: an id never
        changes its schema).  Raises RegistryError when it cannot be parsed here."""
        found = self._record_names.get(schema_id)
        if found is None:
            stored = self._state.schema_by_id(schema_id)
            if stored is None:
                return ()
            found = self._resolver.parse_stored(stored).record_names()
            self._record_names[schema_id] = found
        return found


def _elsewhere(holders: set[str]) -> str:
    if not holders:
        return " (no subject holds it)"
    shown = ", ".join(sorted(holders)[:3]) + (", ..." if len(holders) > 3 else "")
    return f" (it is registered under {shown})"
