"""RFC 5802 / RFC 7677 SCRAM: key derivation, message attributes, the client's steps.

The server's side (looking up credentials, checking the proof) is in
``samsa.security.sasl.scram_server``; both use the formulas here, so the bytes
each end computes are computed once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from samsa.errors import DecodeError

# Kafka's ScramMechanism: name -> (hash name, minimum iterations).
MECHANISMS = {"SCRAM-SHA-256": ("sha256", 4096), "SCRAM-SHA-512": ("sha512", 4096)}
GS2_HEADER = "n,,"
MAX_ITERATIONS = 16384
"""The most iterations Kafka's controller accepts for a stored credential."""

# Kafka's org.apache.kafka.clients.admin.ScramMechanism types, as sent on the
# wire and stored in UserScramCredentialRecord (0 is UNKNOWN).
MECHANISM_TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MECHANISM_NAMES = {type_: name for name, type_ in MECHANISM_TYPES.items()}


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What a server stores per user and mechanism (Kafka's UserScramCredentialRecord)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def hash_name(mechanism: str) -> str:
    try:
        return MECHANISMS[mechanism][0]
    except KeyError:
        raise ValueError(f"unknown SCRAM mechanism {mechanism!r}") from None


def hmac_digest(mechanism: str, key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hash_name(mechanism)).digest()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(hash_name(mechanism), password.encode(), salt, iterations)


def client_key(mechanism: str, salted: bytes) -> bytes:
    return hmac_digest(mechanism, salted, b"Client Key")


def make_credential(
    mechanism: str, password: str, *, salt: bytes | None = None, iterations: int = 4096
) -> ScramCredential:
    salt = salt if salt is not None else secrets.token_bytes(32)
    salted = salted_password(mechanism, password, salt, iterations)
    return credential_from_salted(mechanism, salt, salted, iterations)


def credential_from_salted(
    mechanism: str, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    """What the server keeps of a salted password (Kafka's ScramFormatter keys)."""
    stored = hashlib.new(hash_name(mechanism), client_key(mechanism, salted)).digest()
    server = hmac_digest(mechanism, salted, b"Server Key")
    return ScramCredential(salt, stored, server, iterations)


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def parse_attributes(message: str) -> dict[str, str]:
    """``a=1,b=2`` -> {"a": "1", "b": "2"}; DecodeError on anything else."""
    out: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise DecodeError(f"bad SCRAM attribute {part!r}")
        out[key] = value
    return out


TOKEN_AUTH = "tokenauth"
"""The SCRAM extension (KIP-48, Kafka's ``ScramLoginModule.TOKEN_AUTH_CONFIG``)
by which a client says its user name is a delegation token's id and its
password the token's HMAC."""


def parse_client_first_bare(bare: str) -> tuple[str, str, dict[str, str]]:
    """``n=user,r=nonce[,key=value...]`` -> (user, client nonce, extensions).

    Kafka's ``ClientFirstMessage``: the extensions (RFC 5802's ``extensions``,
    which Kafka uses for ``tokenauth=true``) follow the nonce, each a
    ``key=value`` of any key; DecodeError for anything else.
    """
    parts = bare.split(",")
    if len(parts) < 2 or not parts[0].startswith("n=") or not parts[1].startswith("r="):
        raise DecodeError("client-first-message needs n= and r=")
    extensions: dict[str, str] = {}
    for part in parts[2:]:
        key, sep, value = part.partition("=")
        if not sep or not key or not value:
            raise DecodeError(f"bad SCRAM extension {part!r}")
        extensions[key] = value
    return unescape_name(parts[0][2:]), parts[1][2:], extensions


def is_token_auth(extensions: dict[str, str]) -> bool:
    """Kafka's ``ScramExtensions.tokenAuthenticated``: ``tokenauth=true``, any case."""
    return extensions.get(TOKEN_AUTH, "").lower() == "true"


def escape_name(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def unescape_name(name: str) -> str:
    if "=" in name.replace("=3D", "").replace("=2C", ""):
        raise DecodeError("bad escape in SCRAM username")
    return name.replace("=2C", ",").replace("=3D", "=")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise DecodeError("bad base64 in SCRAM message") from None


class ScramClient:
    """The client's three steps: first message, final message, server check."""

    def __init__(
        self,
        mechanism: str,
        username: str,
        password: str,
        nonce: str = "",
        extensions: dict[str, str] | None = None,
    ) -> None:
        """``extensions``: SCRAM extensions for the first message, as Kafka's
        client sends ``tokenauth=true`` to log in by delegation token."""
        hash_name(mechanism)
        self.mechanism = mechanism
        self.password = password
        self.nonce = nonce or secrets.token_urlsafe(24)
        tail = "".join(f",{key}={value}" for key, value in (extensions or {}).items())
        self._first_bare = f"n={escape_name(username)},r={self.nonce}{tail}"
        self._server_signature = b""

    def first_message(self) -> bytes:
        return (GS2_HEADER + self._first_bare).encode()

    def final_message(self, server_first: bytes) -> bytes:
        text = server_first.decode()
        attrs = parse_attributes(text)
        if "e" in attrs:
            raise DecodeError(f"SCRAM server error: {attrs['e']}")
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s", ""), attrs.get("i", "")
        if not nonce.startswith(self.nonce) or not iterations.isdigit():
            raise DecodeError("SCRAM server-first-message has a bad nonce or iteration count")
        salted = salted_password(self.mechanism, self.password, unb64(salt), int(iterations))
        without_proof = f"c={b64(GS2_HEADER.encode())},r={nonce}"
        auth_message = f"{self._first_bare},{text},{without_proof}".encode()
        key = client_key(self.mechanism, salted)
        stored = hashlib.new(hash_name(self.mechanism), key).digest()
        proof = xor(key, hmac_digest(self.mechanism, stored, auth_message))
        server_key = hmac_digest(self.mechanism, salted, b"Server Key")
        self._server_signature = hmac_digest(self.mechanism, server_key, auth_message)
        return f"{without_proof},p={b64(proof)}".encode()

    def check_server_final(self, server_final: bytes) -> None:
        """Raises DecodeError unless the server proved it knows the credential."""
        attrs = parse_attributes(server_final.decode())
        if "e" in attrs:
            raise DecodeError(f"SCRAM server error: {attrs['e']}")
        if not hmac.compare_digest(unb64(attrs.get("v", "")), self._server_signature):
            raise DecodeError("SCRAM server signature does not match")
