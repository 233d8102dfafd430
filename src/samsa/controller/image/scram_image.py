"""SCRAM credentials in the metadata image (Kafka's ScramImage).

One credential per (user, mechanism), replayed from UserScramCredentialRecord
and RemoveUserScramCredentialRecord on every node, so any broker checks a
SCRAM login against the credentials the controller committed.  Changed only
by ``replay``; as the rest of the image, a record that does not apply (a
removal of a credential that does not exist, an unknown mechanism) raises
``MetadataReplayError`` and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from samsa.protocol.sasl.scram import MECHANISM_NAMES, ScramCredential

log = logging.getLogger(__name__)


class ScramReplayError(ValueError):
    """A SCRAM record that does not apply to the image."""


class ScramImage:
    def __init__(self) -> None:
        self._credentials: dict[tuple[str, str], ScramCredential] = {}

    def replay_upsert(self, body: Mapping[str, Any]) -> None:
        user, mechanism = body["name"], _mechanism(body)
        created = (user, mechanism) not in self._credentials
        self._credentials[(user, mechanism)] = ScramCredential(
            bytes(body["salt"]),
            bytes(body["stored_key"]),
            bytes(body["server_key"]),
            body["iterations"],
        )
        log.info("%s %s credential of user %s", "added" if created else "replaced", mechanism, user)

    def replay_remove(self, body: Mapping[str, Any]) -> None:
        user, mechanism = body["name"], _mechanism(body)
        if self._credentials.pop((user, mechanism), None) is None:
            raise ScramReplayError(
                f"RemoveUserScramCredentialRecord for {user} ({mechanism}): no such credential"
            )
        log.info("removed %s credential of user %s", mechanism, user)

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        """The credential a SCRAM login of ``user`` is checked against, if any."""
        return self._credentials.get((user, mechanism))

    def users(self) -> list[str]:
        return sorted({user for user, _ in self._credentials})

    def mechanisms_of(self, user: str) -> list[tuple[str, ScramCredential]]:
        """(mechanism name, credential) of ``user``, by mechanism name."""
        return sorted((m, c) for (u, m), c in self._credentials.items() if u == user)

    def __iter__(self) -> Iterator[tuple[str, str, ScramCredential]]:
        for (user, mechanism), credential in sorted(self._credentials.items()):
            yield user, mechanism, credential

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScramImage):
            return NotImplemented
        return self._credentials == other._credentials

    __hash__ = None  # type: ignore[assignment]


def _mechanism(body: Mapping[str, Any]) -> str:
    name = MECHANISM_NAMES.get(body["mechanism"])
    if name is None:
        raise ScramReplayError(f"unknown SCRAM mechanism type {body['mechanism']}")
    return name
