"""Where a node listens, as Raft knows it (Kafka's Endpoint).

Its own module because both the voter set and the replicated records carry
endpoints, and neither should have to import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One listener of a node (Kafka's Endpoint: listener name, host, port)."""

    listener: str
    host: str
    port: int
