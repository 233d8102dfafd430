"""What the rest of the broker may ask of this node's registry, in microseconds.

The seam for broker-side validation (``confluent.value.schema.validation``):
a produce handler asks whether the schema id a record's header carries is
registered for the record topic's subject, without touching HTTP or Kafka.
The answers come from the state this node replays from ``_schemas`` (so they
lag a registration by the replay's delay, as any read here does), on the
event loop, where the state changes.
"""

from __future__ import annotations

from samsa.registry.store import RegistryState


class RegistryView:
    def __init__(self, state: RegistryState) -> None:
        self._state = state

    def is_registered(self, schema_id: int, subject: str) -> bool:
        """A live (not soft-deleted) version of ``subject`` carries ``schema_id``."""
        return any(v.subject == subject for v in self._state.holders_of(schema_id))

    def is_known_id(self, schema_id: int) -> bool:
        """Some subject, deleted or not, holds ``schema_id``."""
        return self._state.schema_by_id(schema_id) is not None

    def subjects_of(self, schema_id: int) -> list[str]:
        return sorted({v.subject for v in self._state.holders_of(schema_id)})
