"""SSL contexts from Kafka's ``ssl.*`` settings (PEM keystores and truststores).

Shared by the broker's TLS listeners, its own connections to other nodes and
the client, so it sits beside ``config.py`` (the client may not import
``samsa.security``).

A keystore is either inline PEM (``ssl.keystore.certificate.chain`` plus
``ssl.keystore.key``) or a PEM file holding both (``ssl.keystore.location``);
a truststore is inline (``ssl.truststore.certificates``) or a file
(``ssl.truststore.location``).  Python's ``ssl`` reads a certificate chain
only from a file, so inline PEM passes through a private temporary file that
is removed as soon as it is read.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path

from samsa.errors import ConfigError

Lookup = Callable[[str], str]
"""``lookup(key)``: the setting (listener-prefixed first), "" when unset."""

_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}


def _enabled_protocols(ctx: ssl.SSLContext, value: str) -> None:
    names = [part.strip() for part in value.split(",") if part.strip()] or list(_PROTOCOLS)
    unknown = [name for name in names if name not in _PROTOCOLS]
    if unknown:
        raise ConfigError(
            f"ssl.enabled.protocols: {', '.join(unknown)} not supported (TLSv1.2, TLSv1.3)"
        )
    versions = sorted(_PROTOCOLS[name] for name in names)
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]


def _check_pem(lookup: Lookup, key: str) -> None:
    kind = lookup(key).strip().upper()
    if kind and kind != "PEM":
        raise ConfigError(f"{key}={kind}: Samsa reads PEM keystores and truststores only")


def _load_keystore(ctx: ssl.SSLContext, lookup: Lookup, *, required: bool) -> bool:
    _check_pem(lookup, "ssl.keystore.type")
    password = lookup("ssl.key.password") or None
    chain, key, location = (
        lookup("ssl.keystore.certificate.chain"),
        lookup("ssl.keystore.key"),
        lookup("ssl.keystore.location"),
    )
    try:
        if chain or key:
            if not (chain and key):
                raise ConfigError("ssl.keystore.certificate.chain and ssl.keystore.key go together")
            with tempfile.TemporaryDirectory(prefix="samsa-keystore-") as tmp:
                path = Path(tmp) / "keystore.pem"
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as out:
                    out.write(key.strip() + "\n" + chain.strip() + "\n")
                ctx.load_cert_chain(path, password=password)
            return True
        if location:
            ctx.load_cert_chain(location, password=password)
            return True
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"ssl.keystore: cannot load the key and certificate: {exc}") from None
    if required:
        raise ConfigError(
            "an SSL listener needs a keystore: ssl.keystore.location, or "
            "ssl.keystore.certificate.chain with ssl.keystore.key"
        )
    return False


def _load_truststore(ctx: ssl.SSLContext, lookup: Lookup) -> bool:
    _check_pem(lookup, "ssl.truststore.type")
    certificates, location = (
        lookup("ssl.truststore.certificates"),
        lookup("ssl.truststore.location"),
    )
    try:
        if certificates:
            ctx.load_verify_locations(cadata=certificates)
            return True
        if location:
            ctx.load_verify_locations(cafile=location)
            return True
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"ssl.truststore: cannot load the certificates: {exc}") from None
    return False


def server_context(lookup: Lookup) -> ssl.SSLContext:
    """The context of a TLS listener; ConfigError names the setting at fault."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _enabled_protocols(ctx, lookup("ssl.enabled.protocols"))
    _load_keystore(ctx, lookup, required=True)
    client_auth = (lookup("ssl.client.auth") or "none").strip().lower()
    if client_auth not in _CLIENT_AUTH:
        raise ConfigError(
            f"ssl.client.auth: expected none, requested or required, got {client_auth!r}"
        )
    has_trust = _load_truststore(ctx, lookup)
    if client_auth != "none" and not has_trust:
        raise ConfigError(f"ssl.client.auth={client_auth} needs a truststore to check clients with")
    ctx.verify_mode = _CLIENT_AUTH[client_auth]
    return ctx


def client_context(lookup: Lookup) -> ssl.SSLContext:
    """A context for this node's own connections (to brokers and controllers)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _enabled_protocols(ctx, lookup("ssl.enabled.protocols"))
    if not _load_truststore(ctx, lookup):
        ctx.load_default_certs()
    _load_keystore(ctx, lookup, required=False)
    ctx.check_hostname = lookup("ssl.endpoint.identification.algorithm").lower() == "https"
    return ctx
