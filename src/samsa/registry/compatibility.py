"""Compatibility levels and modes, and the check of a new schema against a subject's versions.

BACKWARD: the new schema reads data written with the latest version (consumers
upgrade first).  FORWARD: the latest version reads data written with the new one
(producers upgrade first).  FULL: both.  The ``_TRANSITIVE`` forms check every
live version instead of the latest only.  NONE checks nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from samsa.registry.formats.base import ParsedSchema

LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
DEFAULT_LEVEL = "BACKWARD"
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
DEFAULT_MODE = "READWRITE"


def incompatibilities(
    level: str, new: ParsedSchema, previous: Sequence[tuple[int, ParsedSchema]]
) -> list[str]:
    """Why ``new`` may not follow ``previous`` (``(version, schema)``, ascending) at ``level``.

    Empty when it may.  The messages follow Confluent's: each failing version adds
    its errors, then ``{oldSchemaVersion: n}``, ``{oldSchema: '...'}`` and
    ``{compatibility: 'LEVEL'}``.
    """
    if level == "NONE" or not previous:
        return []
    against = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    base = level.removesuffix("_TRANSITIVE")
    messages: list[str] = []
    for version, old in reversed(against):
        errors: list[str] = []
        if base in ("BACKWARD", "FULL"):
            errors += new.read_errors(old)
        if base in ("FORWARD", "FULL"):
            errors += old.read_errors(new)
        if errors:
            messages += errors
            messages.append(f"{{oldSchemaVersion: {version}}}")
            messages.append(f"{{oldSchema: '{old.canonical()}'}}")
            messages.append(f"{{compatibility: '{level}'}}")
    return messages
