"""The authenticated identity of a connection, as Kafka names it (``User:alice``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samsa.security.ssl_principal_mapper import SslPrincipalMapper


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    type: str
    name: str
    token_authenticated: bool = field(default=False, compare=False)
    """Logged in by a delegation token (Kafka's ``tokenAuthenticated``): such a
    connection may not create, renew or expire tokens.  Not part of equality
    or of the name, as in Kafka: ACLs and owners name the principal alone."""

    def __str__(self) -> str:
        return f"{self.type}:{self.name}"


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")


def user(name: str) -> KafkaPrincipal:
    return KafkaPrincipal("User", name)


def parse_principal(text: str) -> KafkaPrincipal:
    """``User:alice`` -> the principal (Kafka's ``SecurityUtils.parseKafkaPrincipal``:
    split at the first colon); ValueError without one."""
    kind, sep, name = text.partition(":")
    if not sep or not text:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    return KafkaPrincipal(kind, name)


# Kafka's X500Principal.getName() (RFC 2253) keywords for the OIDs Python names.
_RFC2253_KEYS = {
    "commonName": "CN",
    "organizationalUnitName": "OU",
    "organizationName": "O",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "countryName": "C",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}


def _escape(value: str) -> str:
    out = "".join("\\" + ch if ch in ',+"\\<>;=' else ch for ch in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return out


def distinguished_name(peercert: dict[str, Any]) -> str:
    """A certificate subject (``ssl.getpeercert()``) as Kafka prints it.

    RFC 2253 lists the most specific name first, the reverse of the order in
    the certificate, so ``/C=NO/O=Samsa/CN=alice`` becomes ``CN=alice,O=Samsa,C=NO``.
    """
    parts = []
    for rdn in reversed(peercert.get("subject", ())):
        parts.append(
            "+".join(f"{_RFC2253_KEYS.get(key, key)}={_escape(value)}" for key, value in rdn)
        )
    return ",".join(parts)


def ssl_principal(
    peercert: dict[str, Any] | None, mapper: SslPrincipalMapper | None = None
) -> KafkaPrincipal:
    """The subject DN through ``ssl.principal.mapping.rules`` (DEFAULT: the whole
    DN); raises NoRuleApplies when the rules refuse it."""
    if not peercert:
        return ANONYMOUS
    subject = distinguished_name(peercert)
    return user(subject if mapper is None else mapper.name(subject))
