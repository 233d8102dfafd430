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

from collections.abc import Callable, Iterable

from samsa.errors import ConfigError
from samsa.jaas import JaasConfig, parse_jaas
from samsa.protocol.sasl.scram import MECHANISMS as SCRAM_MECHANISMS
from samsa.protocol.sasl.scram import ScramCredential, make_credential
from samsa.security.sasl.plain_server import PlainServer
from samsa.security.sasl.scram_server import CredentialLookup, ScramServer
from samsa.security.sasl.session import MechanismFactory

SUPPORTED = ("PLAIN", *SCRAM_MECHANISMS)


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
) -> dict[str, MechanismFactory]:
    """Factories of the enabled mechanisms; ``jaas_text(mechanism)`` gives
    (the JAAS line, the config key it came from), the line empty when unset;
    ``stored`` finds the SCRAM credentials of the metadata log."""
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
        else:
            for name, password in jaas.users.items():
                scram.put(name, mechanism, make_credential(mechanism, password))
            factories[mechanism] = lambda m=mechanism: ScramServer(m, scram.get)  # type: ignore[misc]
    return factories
