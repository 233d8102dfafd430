"""Kafka release versions as its configs spell them (``0.10.0``, ``2.8``, ``3.0-IV1``).

``message.format.version`` (topic), ``log.message.format.version`` and
``inter.broker.protocol.version`` (server) take a Kafka version.  Samsa
ignores their value (it always writes RecordBatch v2 and speaks what the peer
negotiates), but tools, client test suites and old ``server.properties`` files
still set them, so they must accept exactly what Kafka's own parser accepts
and refuse the rest, like Kafka's ``MetadataVersionValidator``.

Kafka's parser (``MetadataVersion.fromVersionString``, Kafka 3.x) keeps the
first three dot-separated parts of a version starting with ``0.`` and the first
two of any other, then looks the result up among the release names (``2.8``)
and the internal versions (``2.8-IV1``).  So ``0.10.0.0`` reads as ``0.10.0``,
``2.8.1`` as ``2.8`` and ``0.8.2.x`` as ``0.8.2``, while ``0.10``, ``9.9`` or
``2.8.`` (Java's split drops the empty last part, so nothing is cut) name no
release and are refused.
"""

from __future__ import annotations

# Each release and its internal versions, oldest first: Kafka 3.9's
# MetadataVersion table, and 4.0's (whose parser still reads the key).
_RELEASES: tuple[tuple[str, int], ...] = (
    ("0.10.0", 2),
    ("0.10.1", 3),
    ("0.10.2", 1),
    ("0.11.0", 3),
    ("1.0", 1),
    ("1.1", 1),
    ("2.0", 2),
    ("2.1", 3),
    ("2.2", 2),
    ("2.3", 2),
    ("2.4", 2),
    ("2.5", 1),
    ("2.6", 1),
    ("2.7", 3),
    ("2.8", 2),
    ("3.0", 2),
    ("3.1", 1),
    ("3.2", 1),
    ("3.3", 4),
    ("3.4", 1),
    ("3.5", 3),
    ("3.6", 3),
    ("3.7", 5),
    ("3.8", 1),
    ("3.9", 1),
    ("4.0", 4),
)
# Releases from before internal versions existed: only the bare name.
_PLAIN_RELEASES = ("0.8.0", "0.8.1", "0.8.2", "0.9.0")

KNOWN_VERSIONS: frozenset[str] = frozenset(
    (
        *_PLAIN_RELEASES,
        *(release for release, _ in _RELEASES),
        *(f"{release}-IV{n}" for release, count in _RELEASES for n in range(count)),
    )
)

EXPECTED = "a Kafka version such as 0.10.0, 0.11.0-IV2, 2.8 or 3.0-IV1"


def is_kafka_version(text: str) -> bool:
    """True when Kafka's version parser would accept ``text``."""
    parts = text.split(".")
    while parts and not parts[-1]:  # Java's split drops trailing empty parts
        parts.pop()
    kept = 3 if text.startswith("0.") else 2
    key = ".".join(parts[:kept]) if len(parts) > kept else text
    return key in KNOWN_VERSIONS
