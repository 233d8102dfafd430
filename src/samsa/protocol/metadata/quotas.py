"""ClientQuotaRecord (api key 14) and the quota entity types and keys it may carry.

Transcribed from Kafka's ClientQuotaRecord.json as Kafka 3.x and 4.0 write it
(version 0, flexible).  One record sets (or, with ``remove``, deletes) one key
of one entity; the entity is a list of (type, name) pairs where a null name is
that type's default.  The entity types and keys are Kafka's
``ClientQuotaEntity`` and ``QuotaConfig`` names, shared by the controller that
validates them and the broker that enforces them.
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F

CLIENT_QUOTA = DataSchema(
    "ClientQuotaRecord",
    valid=(0, 0),
    flexible=0,
    fields=(
        F(
            "entity",
            "[]struct",
            fields=[
                F("entity_type", "string"),
                F("entity_name", "string", nullable="0+", default=None),
            ],
        ),
        F("key", "string"),
        F("value", "float64", default=0.0),
        F("remove", "bool", default=False),
    ),
)

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

CLIENT_KEYS = frozenset(
    {PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE}
)
"""Keys of user and client-id entities."""
IP_KEYS = frozenset({CONNECTION_CREATION_RATE})
"""Keys of ip entities."""
LONG_KEYS = frozenset({PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, CONNECTION_CREATION_RATE})
"""Keys Kafka declares LONG or INT: their values must be whole numbers."""

Entity = tuple[tuple[str, str | None], ...]
"""(entity type, name or None for the default) pairs, sorted by type."""


def make_entity(pairs: list[tuple[str, str | None]]) -> Entity:
    return tuple(sorted(pairs, key=lambda pair: pair[0]))


RECORDS: tuple[tuple[int, DataSchema], ...] = ((14, CLIENT_QUOTA),)
