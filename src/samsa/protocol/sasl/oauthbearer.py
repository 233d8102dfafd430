"""OAUTHBEARER (RFC 7628) as Kafka speaks it: the client's message and JWS tokens.

The client sends one message, ``n,[a=authzid],^Aauth=Bearer <token>[^Akey=value]*^A^A``
(``^A`` is 0x01).  A server that refuses the token answers with a JSON error
(``{"status":"invalid_token"}``); the client acknowledges with a lone ``^A``
and the server then fails the exchange, as Kafka's OAuthBearerSaslServer does.

Tokens are compact JWS: ``base64url(header).base64url(claims).base64url(signature)``.
An *unsecured* token (Kafka's OAuthBearerUnsecuredJws, for tests) has header
``{"alg":"none"}`` and an empty signature.  Parsing is here, shared by the
client (which builds unsecured tokens from its JAAS options) and the broker
(which validates; ``samsa.security.sasl.oauth_validation``).  No I/O.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import Any

from samsa.errors import DecodeError

MECHANISM = "OAUTHBEARER"
KVSEP = "\x01"
_AUTH = re.compile(r"auth=Bearer ([-._~+/A-Za-z0-9]+=*)$")


def client_message(
    token: str, authzid: str = "", extensions: dict[str, str] | None = None
) -> bytes:
    """The client's initial response carrying ``token``."""
    gs2 = f"n,{'a=' + authzid if authzid else ''},"
    ext = "".join(f"{KVSEP}{k}={v}" for k, v in sorted((extensions or {}).items()))
    return f"{gs2}{KVSEP}auth=Bearer {token}{ext}{KVSEP}{KVSEP}".encode()


def parse_client_message(data: bytes) -> tuple[str, str, dict[str, str]]:
    """(token, authorization id, extensions); DecodeError on anything malformed."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise DecodeError("OAUTHBEARER message is not UTF-8") from None
    gs2, sep, rest = text.partition(KVSEP)
    if not sep or not rest.endswith(KVSEP + KVSEP):
        raise DecodeError("Invalid OAUTHBEARER client first message")
    parts = gs2.split(",")
    if (
        len(parts) != 3
        or parts[0] != "n"
        or parts[2]
        or (parts[1] and not parts[1].startswith("a="))
    ):
        raise DecodeError("Invalid OAUTHBEARER client first message: bad GS2 header")
    authzid = parts[1][2:]
    token = ""
    extensions: dict[str, str] = {}
    for pair in rest[:-2].split(KVSEP):
        match = _AUTH.match(pair)
        if match:
            token = match.group(1)
            continue
        key, eq, value = pair.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z]+", key):
            raise DecodeError(f"Invalid OAUTHBEARER key/value pair {pair[:40]!r}")
        extensions[key] = value
    if not token:
        raise DecodeError("Invalid OAUTHBEARER client first message: no auth=Bearer token")
    return token, authzid, extensions


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raise DecodeError("bad base64url in JWS") from None


@dataclass(frozen=True, slots=True)
class Jws:
    """A compact JWS split into its parts (claims not yet trusted)."""

    header: dict[str, Any]
    claims: dict[str, Any]
    signing_input: bytes
    signature: bytes


def parse_jws(token: str) -> Jws:
    parts = token.split(".")
    if len(parts) != 3:
        raise DecodeError("a JWS has three dot-separated parts")
    try:
        header = json.loads(unb64url(parts[0]))
        claims = json.loads(unb64url(parts[1]))
    except (ValueError, UnicodeDecodeError):
        raise DecodeError("JWS header or claims are not JSON") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise DecodeError("JWS header and claims must be JSON objects")
    return Jws(header, claims, f"{parts[0]}.{parts[1]}".encode(), unb64url(parts[2]))


def unsecured_token(claims: dict[str, Any]) -> str:
    """Kafka's unsecured JWS: ``{"alg":"none"}``, the claims, no signature."""
    header = b64url(json.dumps({"alg": "none"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{body}."


def unsecured_login_token(options: dict[str, str], now_ms: int) -> str:
    """Kafka's OAuthBearerUnsecuredLoginCallbackHandler: a token from JAAS options.

    ``unsecuredLoginStringClaim_<name>="value"``, ``unsecuredLoginNumberClaim_<name>``,
    ``unsecuredLoginListClaim_<name>`` (the first character separates the items:
    ``",read,write"``), ``unsecuredLoginPrincipalClaimName`` (default ``sub``,
    which must be given) and ``unsecuredLoginLifetimeSeconds`` (default 3600).
    """
    claims: dict[str, Any] = {}
    for key, value in options.items():
        kind, _, name = key.partition("Claim_")
        if not name:
            continue
        if kind == "unsecuredLoginString":
            claims[name] = value
        elif kind == "unsecuredLoginNumber":
            claims[name] = float(value) if "." in value else int(value)
        elif kind == "unsecuredLoginList":
            claims[name] = [item for item in value[1:].split(value[0])] if value else []
    principal = options.get("unsecuredLoginPrincipalClaimName", "sub")
    if not claims.get(principal):
        raise ValueError(f"unsecuredLoginStringClaim_{principal} is required")
    lifetime_s = int(options.get("unsecuredLoginLifetimeSeconds", "3600"))
    claims.setdefault("iat", now_ms / 1000)
    claims.setdefault("exp", now_ms / 1000 + lifetime_s)
    return unsecured_token(claims)
