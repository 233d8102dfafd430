"""Typed settings with Kafka's names: the broker's key table and its resolved values,
topic config synonyms, node settings, listeners, SSL, JAAS and Kafka versions.

``ConfigKey`` and the value parsers are in ``values``; the key table, one module
per area, in ``broker_keys`` (read its docstring to add a key); ``BrokerConfig``
in ``broker_config``.  This module re-exports what callers import from
``samsa.config``.
"""

from __future__ import annotations

from samsa.config.broker_config import LISTENER_PREFIX, BrokerConfig
from samsa.config.broker_keys import KEYS
from samsa.config.values import INT32_MAX, ConfigKey, parse_host_port, parse_properties
from samsa.errors import ConfigError

__all__ = [
    "INT32_MAX",
    "KEYS",
    "LISTENER_PREFIX",
    "BrokerConfig",
    "ConfigError",
    "ConfigKey",
    "parse_host_port",
    "parse_properties",
]
