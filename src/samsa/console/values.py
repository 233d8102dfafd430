"""How record keys, values, header values and configs are shown: safely and bounded.

Bytes that decode as UTF-8 without control characters are text; text that parses as a JSON object or
array is pretty-printed; anything else is hex.  Every rendering is capped
(``TEXT_LIMIT`` characters, ``HEX_LIMIT`` bytes) and carries the full size, so
a 10 MB value costs the page a few kilobytes and says how much it left out.
"""

from __future__ import annotations

import json
import re
from typing import Any

SECRET_MARKERS = ("password", "secret", "jaas", "credential", "token", "ssl.key")
MASK = "******"
TEXT_LIMIT = 4096
HEX_LIMIT = 512
# Control characters other than tab and line breaks: valid UTF-8, but not text.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def masked(name: str, value: str | None) -> str | None:
    """Configs that may hold secrets are never shown."""
    return MASK if value is not None and any(m in name for m in SECRET_MARKERS) else value


def render(data: bytes | None) -> dict[str, Any] | None:
    """``{"encoding": "json"|"text"|"hex", "text", "size", "truncated"}``, None for null."""
    if data is None:
        return None
    size = len(data)
    text = _as_text(data)
    if text is None:
        shown = bytes(data[:HEX_LIMIT]).hex(" ")
        return {"encoding": "hex", "text": shown, "size": size, "truncated": size > HEX_LIMIT}
    if len(text) <= TEXT_LIMIT and text[:1] in ("{", "[") and (pretty := _pretty_json(text)):
        return {"encoding": "json", "text": pretty, "size": size, "truncated": False}
    return {
        "encoding": "text",
        "text": text[:TEXT_LIMIT],
        "size": size,
        "truncated": len(text) > TEXT_LIMIT,
    }


def _as_text(data: bytes) -> str | None:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if CONTROL.search(text) else text


def _pretty_json(text: str) -> str | None:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return None


def matches(rendered: dict[str, Any] | None, needle: str) -> bool:
    """The search box: ``needle`` (lower case) is a substring of the shown text
    (the hex digits, for binary data)."""
    if rendered is None:
        return False
    return needle in rendered["text"].lower()
