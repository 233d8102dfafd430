"""The users a listener accepts, per mechanism, from its JAAS configuration.

Kafka looks up ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` first,
then ``sasl.jaas.config``.  PLAIN users are its ``user_<name>`` entries.  SCRAM
users are stored in the metadata log, as in Kafka (UserScramCredentialRecord,
looked up through ``stored``); besides those, the ``user_<name>`` entries in
the SCRAM mechanism's JAAS line are salted at start-up into SCRAM credentials
(a Samsa extension, never sent anywhere), and they win over a stored one of
the same name, as configuration a node was started with.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from samsa.config.jaas import JaasConfig, parse_jaas
from samsa.errors import ConfigError
from samsa.protocol.sasl.oauthbearer import MECHANISM as OAUTHBEARER
from samsa.protocol.sasl.scram import MECHANISMS as SCRAM_MECHANISMS
from samsa.protocol.sasl.scram import ScramCredential, make_credential
from samsa.security.sasl.oauth_validation import (
    ClaimRules,
    JwksValidator,
    TokenValidator,
    UnsecuredValidator,
)
from samsa.security.sasl.oauthbearer_server import OAuthBearerServer
from samsa.security.sasl.plain_server import PlainServer
from samsa.security.sasl.scram_server import CredentialLookup, ScramServer, TokenLookup
from samsa.security.sasl.session import MechanismFactory

SUPPORTED = ("PLAIN", *SCRAM_MECHANISMS, OAUTHBEARER)


class ScramCredentials:
    """(user, mechanism) -> credential; the one place a SCRAM server looks users up."""

    def __init__(self, stored: CredentialLookup | None = None) -> None:
        self._credentials: dict[tuple[str, str], ScramCredential] = {}
        self._stored = stored

    def put(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self._credentials[(user, mechanism)] = credential

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        found = self._credentials.get((user, mechanism))
        if found is None and self._stored is not None:
            found = self._stored(user, mechanism)
        return found


def server_mechanisms(
    enabled: Iterable[str],
    jaas_text: Callable[[str], tuple[str, str]],
    stored: CredentialLookup | None = None,
    setting: Callable[[str], str] = lambda key: "",
    clock: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    tokens: TokenLookup | None = None,
) -> dict[str, MechanismFactory]:
    """Factories of the enabled mechanisms; ``jaas_text(mechanism)`` gives
    (the JAAS line, the config key it came from), the line empty when unset;
    ``stored`` finds the SCRAM credentials of the metadata log; ``setting``
    reads the listener's ``sasl.oauthbearer.*`` keys; ``tokens`` finds the
    delegation tokens a SCRAM login with ``tokenauth=true`` names."""
    factories: dict[str, MechanismFactory] = {}
    scram = ScramCredentials(stored)
    for mechanism in enabled:
        if mechanism not in SUPPORTED:
            raise ConfigError(
                f"sasl.enabled.mechanisms: {mechanism} is not supported "
                f"(Samsa offers {', '.join(SUPPORTED)})"
            )
        text, key = jaas_text(mechanism)
        jaas = parse_jaas(text, key) if text else JaasConfig("")
        if mechanism == "PLAIN":
            users = jaas.users
            factories[mechanism] = lambda users=users: PlainServer(users)  # type: ignore[misc]
        elif mechanism == OAUTHBEARER:
            validator = token_validator(jaas, key, setting)
            factories[mechanism] = lambda v=validator: OAuthBearerServer(v, clock)  # type: ignore[misc]
        else:
            for name, password in jaas.users.items():
                scram.put(name, mechanism, make_credential(mechanism, password))
            factories[mechanism] = lambda m=mechanism: ScramServer(  # type: ignore[misc]
                m, scram.get, tokens, clock
            )
    return factories


def token_validator(jaas: JaasConfig, key: str, setting: Callable[[str], str]) -> TokenValidator:
    """A JWKS validator when ``sasl.oauthbearer.jwks.endpoint.url`` is set (Kafka's
    OAuthBearerValidatorCallbackHandler), else Kafka's default unsecured one."""
    jwks = setting("sasl.oauthbearer.jwks.endpoint.url").strip()
    if not jwks:
        return UnsecuredValidator.from_jaas(jaas.options, key)
    if not jwks.startswith(("file:", "/")):
        raise ConfigError(
            "sasl.oauthbearer.jwks.endpoint.url: Samsa reads a JWKS file (file:/path), "
            f"not {jwks!r}"
        )
    audience = setting("sasl.oauthbearer.expected.audience")
    rules = ClaimRules(
        principal_claim=setting("sasl.oauthbearer.sub.claim.name") or "sub",
        scope_claim=setting("sasl.oauthbearer.scope.claim.name") or "scope",
        skew_ms=1000 * int(setting("sasl.oauthbearer.clock.skew.seconds") or 30),
        audience=frozenset(a.strip() for a in audience.split(",") if a.strip()),
        issuer=setting("sasl.oauthbearer.expected.issuer").strip(),
    )
    return JwksValidator.from_file(jwks, rules)
