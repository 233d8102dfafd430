"""Who makes a request that did not come off a Kafka connection.

The web console (and any other HTTP surface) hands requests to the broker's own
Kafka API handlers in process, on behalf of the user logged in to it.  The
authorization checks must judge that user exactly as they would judge the same
user on a Kafka listener, so the in-process call carries a ``Caller`` with the
same three facts a connection offers them: the principal (as the authorizer
names it), the client's host (ACLs may name hosts) and its address with port
(for logs and the group coordinator's ``client_host``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from samsa.security.principal import KafkaPrincipal


@dataclass(frozen=True, slots=True)
class Caller:
    principal: KafkaPrincipal
    host: str
    """The client's address without the port, as ACLs name hosts."""
    peer: str
    """``host:port`` of the client, for logs."""
    principal_name: str = field(init=False, compare=False)
    """``str(principal)``, formatted once (the authorizer is asked by this name)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "principal_name", str(self.principal))


def caller_at(principal: KafkaPrincipal, host: str, port: int) -> Caller:
    """The caller ``principal`` from ``host``:``port`` (``[v6]:port`` for IPv6)."""
    peer = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return Caller(principal, host, peer)
