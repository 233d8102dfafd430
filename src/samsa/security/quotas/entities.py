"""Client quota entities and keys, and the precedence Kafka resolves them by.

A quota is set on an entity: a user, a client id, or a (user, client id)
pair, where either part may be the *default* of its type (a ``None`` name).
For a connection's (user, client id) Kafka's ``DefaultQuotaCallback`` takes the
first entity that sets the quota, in this order::

    1. user=U, client-id=C          5. user=<default>, client-id=<default>
    2. user=U, client-id=<default>  6. user=<default>
    3. user=U                       7. client-id=C
    4. user=<default>, client-id=C  8. client-id=<default>

The matched entity also decides who shares the measured rate (Kafka's quota
metric tags): every connection resolving to ``user=U`` shares one rate whatever
its client id, a ``client-id=<default>`` quota gives each client id a rate of
its own.  ``QuotaKey`` is that sharing key.

``ip`` entities exist (``connection_creation_rate``) and are stored and
described, but no byte quota applies to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from samsa.protocol.metadata.quotas import (
    CLIENT_ID,
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    USER,
    Entity,
)


class QuotaType(StrEnum):
    """The quota keys a connection is measured against."""

    PRODUCE = PRODUCER_BYTE_RATE
    FETCH = CONSUMER_BYTE_RATE
    REQUEST = REQUEST_PERCENTAGE


@dataclass(frozen=True, slots=True)
class QuotaKey:
    """Who shares one measured rate: "" where the matched entity does not name the part."""

    user: str
    client_id: str


def _candidates(user: str, client_id: str) -> list[tuple[Entity, QuotaKey]]:
    both = QuotaKey(user, client_id)
    by_user = QuotaKey(user, "")
    by_client = QuotaKey("", client_id)
    return [
        (((CLIENT_ID, client_id), (USER, user)), both),
        (((CLIENT_ID, None), (USER, user)), both),
        (((USER, user),), by_user),
        (((CLIENT_ID, client_id), (USER, None)), both),
        (((CLIENT_ID, None), (USER, None)), both),
        (((USER, None),), by_user),
        (((CLIENT_ID, client_id),), by_client),
        (((CLIENT_ID, None),), by_client),
    ]


def resolve(
    quotas: dict[Entity, dict[str, float]], key: str, user: str, client_id: str
) -> tuple[QuotaKey, float] | None:
    """The quota ``key`` that applies to (user, client id), and who shares it;
    None when no entity sets it."""
    for entity, shared_by in _candidates(user, client_id):
        values = quotas.get(entity)
        if values is not None:
            bound = values.get(key)
            if bound is not None:
                return shared_by, bound
    return None
