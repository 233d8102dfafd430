"""RFC 4616 PLAIN: one message, ``authzid NUL authcid NUL password``."""

from __future__ import annotations

from samsa.errors import DecodeError


def plain_token(username: str, password: str, authzid: str = "") -> bytes:
    return b"\0".join(part.encode() for part in (authzid, username, password))


def parse_plain_token(token: bytes) -> tuple[str, str, str]:
    """(authzid, username, password); DecodeError when it is not three UTF-8 fields."""
    parts = token.split(b"\0")
    if len(parts) != 3:
        raise DecodeError("PLAIN token must be authzid NUL username NUL password")
    try:
        authzid, username, password = (part.decode() for part in parts)
    except UnicodeDecodeError:
        raise DecodeError("PLAIN token is not UTF-8") from None
    return authzid, username, password
