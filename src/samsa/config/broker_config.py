"""``BrokerConfig``: one node's settings resolved against the key table.

Values come from, in increasing precedence, the defaults, a ``server.properties``
file, ``--set key=value`` pairs and explicit command-line flags; each is parsed
by its key's type when set, and an unknown key is refused with a message naming
it, so a typo does not silently fall back to a default.  Security keys may also
be given per listener (``listener.name.<listener>.<key>``), as in Kafka.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from samsa.config.broker_keys import KEYS
from samsa.config.synonyms import topic_defaults
from samsa.config.values import parse_list
from samsa.errors import ConfigError

LISTENER_PREFIX = "listener.name."


def _listener_key(name: str) -> tuple[str, str] | None:
    """``listener.name.<listener>.<key>`` -> (LISTENER, key), for ssl/sasl keys."""
    if not name.startswith(LISTENER_PREFIX):
        return None
    listener, sep, key = name[len(LISTENER_PREFIX) :].partition(".")
    if not sep or not listener:
        return None
    if (key.startswith(("ssl.", "sasl.", "connection.failed.")) or key == "max.connections") and (
        key in KEYS
    ):
        return listener.upper(), key
    mechanism, sep, rest = key.partition(".")
    if sep and rest == "sasl.jaas.config":
        return listener.upper(), f"{mechanism.upper()}.sasl.jaas.config"
    return None


class BrokerConfig:
    """Resolved broker configuration; read values with ``config["log.dirs"]``."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, Any] = {k.name: k.default for k in KEYS.values()}
        self._explicit: set[str] = set()
        self._raw: dict[str, str] = {}
        self._per_listener: dict[tuple[str, str], str] = {}
        if values:
            self.update(values)

    def update(self, values: Mapping[str, str]) -> None:
        for name, raw in values.items():
            self.set(name, raw)

    def set(self, name: str, raw: str) -> None:
        per_listener = _listener_key(name)
        if per_listener is not None:
            self._per_listener[per_listener] = str(raw)
            self._explicit.add(name)
            return
        key = KEYS.get(name)
        if key is None:
            raise ConfigError(f"unknown broker config key {name!r}")
        try:
            value = key.type(str(raw))
        except ValueError as exc:
            raise ConfigError(f"invalid value {raw!r} for {name}: {exc}") from None
        self._values[name] = value
        self._explicit.add(name)
        self._raw[name] = str(raw).strip()

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def for_listener(self, listener: str, name: str) -> str:
        """A security setting of ``listener``: ``listener.name.<listener>.<name>``
        when given, else the node-wide ``name`` (Kafka's lookup order)."""
        value = self._per_listener.get((listener.upper(), name))
        if value is not None:
            return value
        return str(self._values[name]) if name in self._values else ""

    def jaas_for(self, listener: str, mechanism: str) -> tuple[str, str]:
        """(JAAS line, the key it came from) for ``mechanism`` on ``listener``."""
        prefix = f"{LISTENER_PREFIX}{listener.lower()}."
        for key in (f"{mechanism.upper()}.sasl.jaas.config", "sasl.jaas.config"):
            value = self._per_listener.get((listener.upper(), key))
            if value:
                return value, prefix + key.lower()
        return str(self._values["sasl.jaas.config"]), "sasl.jaas.config"

    def value_of(self, name: str) -> Any:
        """The value of any key ``explicit_keys`` lists (listener-prefixed ones too)."""
        per_listener = _listener_key(name)
        if per_listener is not None:
            return self._per_listener[per_listener]
        return self._values[name]

    def is_explicit(self, name: str) -> bool:
        return name in self._explicit

    def explicit_keys(self) -> frozenset[str]:
        """Keys set by a flag, ``--set`` or the config file (not defaults)."""
        return frozenset(self._explicit)

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._values.items()

    @property
    def data_dir(self) -> Path:
        return self.log_dirs[0]

    @property
    def metadata_log_dir(self) -> Path:
        """Where the metadata log lives (Kafka's ``metadata.log.dir``): its own dir,
        else the first log dir.  If it fails, the node stops."""
        return Path(self["metadata.log.dir"]) if self["metadata.log.dir"] else self.data_dir

    @property
    def log_dirs(self) -> list[Path]:
        """Every dir ``log.dirs`` (or ``log.dir``) names (JBOD)."""
        dirs = (
            parse_list(self["log.dirs"])
            if self.is_explicit("log.dirs") or not self["log.dir"]
            else []
        )
        if not dirs:
            dirs = parse_list(self["log.dir"]) or ["./samsa-data"]
        return [Path(d) for d in dirs]

    def explicit_values(self) -> dict[str, str]:
        """The settings given (file, ``--set``, flags) as the strings given:
        Kafka's STATIC_BROKER_CONFIG layer."""
        return dict(self._raw)

    @property
    def retention_ms(self) -> int:
        """log.retention.ms, else .minutes, else .hours (Kafka's precedence), in ms."""
        return int(self.topic_defaults()["retention.ms"])

    @property
    def roll_ms(self) -> int:
        """log.roll.ms, else log.roll.hours, in ms."""
        return int(self.topic_defaults()["segment.ms"])

    def topic_defaults(self) -> dict[str, str]:
        """Broker-level defaults of every topic config, under the topic key names."""
        try:
            return topic_defaults(self._raw)
        except ConfigError as exc:
            raise ConfigError(f"broker setting: {exc}") from None
