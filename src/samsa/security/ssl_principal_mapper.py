"""Kafka's ``ssl.principal.mapping.rules``: a certificate subject to a principal name.

A comma-separated list of ``DEFAULT`` and ``RULE:pattern/replacement/[LU]``
entries (Kafka's SslPrincipalMapper).  Rules are tried in order against the
whole RFC 2253 subject (``CN=alice,OU=eng,O=Samsa``); the first whose pattern
matches all of it gives ``replacement`` with ``$1``-style groups filled in,
lower- or upper-cased by ``L`` or ``U``.  ``DEFAULT`` gives the subject as it
is.  When no rule matches, the client is refused (Kafka fails the handshake
with "No rules apply to ...").  Bad rules are a ConfigError at start-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from samsa.errors import ConfigError

_RULE = re.compile(r"\s*(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?))\s*(?:,|$)")


class NoRuleApplies(Exception):
    """No mapping rule matched the subject: the client must not get in."""


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""

    def apply(self, subject: str) -> str | None:
        if self.pattern is None:
            return subject
        match = self.pattern.fullmatch(subject)
        if match is None:
            return None
        name = match.expand(self.replacement)
        return name.lower() if self.case == "L" else name.upper() if self.case == "U" else name


class SslPrincipalMapper:
    def __init__(self, rules: str = "DEFAULT") -> None:
        self.rules = rules
        self._rules = _parse(rules)

    def name(self, subject: str) -> str:
        """The principal name of ``subject``; NoRuleApplies if no rule matches."""
        for rule in self._rules:
            name = rule.apply(subject)
            if name is not None:
                return name
        raise NoRuleApplies(f"No rules apply to {subject}, rules {self.rules}")


def _parse(text: str) -> list[_Rule]:
    key = "ssl.principal.mapping.rules"
    text = text.strip() or "DEFAULT"
    rules: list[_Rule] = []
    pos = 0
    while pos < len(text):
        match = _RULE.match(text, pos)
        if match is None or match.end() == pos:
            raise ConfigError(f"{key}: cannot read a rule at {text[pos : pos + 30]!r}")
        if match.group(1):
            rules.append(_Rule(None))
        else:
            pattern = match.group(2).replace("\\/", "/")
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"{key}: bad pattern {pattern!r}: {exc}") from None
            replacement = re.sub(r"\$(\d+)", r"\\g<\1>", match.group(3).replace("\\/", "/"))
            rules.append(_Rule(compiled, replacement, match.group(4)))
        pos = match.end()
    return rules
