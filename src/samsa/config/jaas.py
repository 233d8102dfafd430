"""Kafka's one-line JAAS configuration (``sasl.jaas.config``), parsed.

``org.apache.kafka.common.security.plain.PlainLoginModule required
username="admin" password="admin-secret" user_alice="alice-secret";`` names a
login module, a control flag and options.  A broker reads ``username`` and
``password`` as its own credentials (when it connects to other brokers) and
``user_<name>`` entries as the users it accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from samsa.errors import ConfigError

_HEAD = re.compile(r"\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\s*", re.IGNORECASE)
_OPTION = re.compile(r'\s*([\w.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))\s*')


@dataclass(frozen=True)
class JaasConfig:
    login_module: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def users(self) -> dict[str, str]:
        """``user_<name>="<password>"`` entries: the users this broker accepts."""
        return {k[5:]: v for k, v in self.options.items() if k.startswith("user_") and k[5:]}

    @property
    def username(self) -> str:
        return self.options.get("username", "")

    @property
    def password(self) -> str:
        return self.options.get("password", "")


def parse_jaas(text: str, key: str = "sasl.jaas.config") -> JaasConfig:
    head = _HEAD.match(text)
    if head is None:
        raise ConfigError(f"{key}: expected 'LoginModule required key=\"value\" ...;'")
    options: dict[str, str] = {}
    pos = head.end()
    while pos < len(text) and text[pos] != ";":
        option = _OPTION.match(text, pos)
        if option is None:
            raise ConfigError(f"{key}: cannot read an option at {text[pos : pos + 20]!r}")
        quoted, bare = option.group(2), option.group(3)
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        options[option.group(1)] = value
        pos = option.end()
    if text[pos:].strip() != ";":
        raise ConfigError(f"{key}: must end with ';'")
    return JaasConfig(head.group(1), options)
