"""Which names a request's Host header may carry (DNS rebinding defence).

A page on ``evil.example`` whose name an attacker re-points at 127.0.0.1 makes
the operator's browser talk to a loopback console as a "same-origin" request,
but the browser still sends ``Host: evil.example``.  So an endpoint answers
only the names it is reached by: its bind address (and, for a loopback bind,
``localhost``, ``127.0.0.1`` and ``[::1]``), the extra names a setting lists,
and, when bound to every interface, any IP address (an address cannot be
re-pointed) and this machine's host names.  ``*`` among the extra names turns
the check off (behind a proxy that rewrites Host).  Anything else is answered
421 Misdirected Request.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::"})


def host_name(header: str) -> str:
    """The name of a Host header without its port, lower case (``[::1]:80`` -> ``::1``)."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    name, sep, port = value.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        value = name
    return value.rstrip(".")


def is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def local_names() -> set[str]:
    """This machine's host name and fully qualified name."""
    names = {socket.gethostname().lower()}
    try:
        names.add(socket.getfqdn().lower())
    except OSError:
        pass
    return names


class HostCheck:
    def __init__(
        self,
        bind_host: str,
        extra: Iterable[str] = (),
        *,
        setting: str = "",
        machine_names: Callable[[], set[str]] = local_names,
    ) -> None:
        """``setting`` is the key that lists extra names (named in refusals)."""
        extra_names = {host_name(name) for name in extra if name.strip()}
        self.anything = "*" in extra_names
        self.any_ip = bind_host in WILDCARD_BINDS
        names = extra_names - {"*"}
        bound = host_name(bind_host) if bind_host else ""
        if bound and not self.any_ip:
            names.add(bound)
        if self.any_ip or is_loopback(bind_host):
            names |= LOOPBACK_NAMES
        if self.any_ip:
            names |= machine_names()
        self.names = frozenset(names)
        self.setting = setting

    def allows(self, header: str | None) -> bool:
        if self.anything:
            return True
        if not header:
            return False
        name = host_name(header)
        return name in self.names or (self.any_ip and is_ip(name))

    def refusal(self, header: str | None) -> str:
        """Why a request with this Host header is refused, in one line."""
        given = f"Host {header!r}" if header else "a request without a Host header"
        adds = f" ({self.setting} adds names)" if self.setting else ""
        return f"misdirected request: {given} is not a name of this endpoint{adds}"
