"""The broker's settings as they are now: ``server.properties`` under the dynamic ones.

Kafka's ``DynamicBrokerConfig`` (KIP-226).  Dynamic broker configs are
ConfigRecords in the metadata log for resource type BROKER, either per broker
(resource name = the node id) or the cluster-wide default (resource name
``""``).  Precedence, highest first: this broker's dynamic value, the
cluster-wide dynamic default, the static value (``server.properties``, ``--set``,
flags), the built-in default.  A dynamic value replaces its synonyms below it:
a dynamic ``log.retention.ms`` wins over a static ``log.retention.hours``.

Nothing here is cached across metadata changes: each read builds from the image
it is given, so a committed ConfigRecord applies as soon as the broker has it,
without a restart.  Names that are not dynamic are ignored if the log holds
them (a record written by a newer or a misconfigured node).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from samsa.config.broker_config import BrokerConfig
from samsa.config.broker_keys import KEYS
from samsa.config.synonyms import (
    DYNAMIC_BROKER_CONFIGS,
    NO_STATIC_DEFAULT,
    broker_config_synonyms,
    format_broker_value,
)
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ConfigError

log = logging.getLogger(__name__)

# Kafka's DescribeConfigsResponse.ConfigSource ids.
SOURCE_TOPIC_CONFIG = 1
SOURCE_DYNAMIC_BROKER = 2
SOURCE_DYNAMIC_DEFAULT_BROKER = 3
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5

STATIC_DEFAULTS: dict[str, str] = {
    key.name: value
    for key in KEYS.values()
    if key.name not in NO_STATIC_DEFAULT and (value := format_broker_value(key.default)) is not None
}


class DynamicBrokerConfig:
    """Layered broker settings of one node; read on the broker's event loop."""

    def __init__(
        self, static: BrokerConfig, node_id: int, image: Callable[[], MetadataImage]
    ) -> None:
        self.static = static
        self.node_id = node_id
        self._image = image
        self._built_from: tuple[frozenset[tuple[str, str]], ...] | None = None
        self._current = static
        self._topic_defaults: dict[str, str] = {}

    # ------------------------------------------------------------------ layers
    def _dynamic(self, resource_name: str) -> dict[str, str]:
        stored = self._image().broker_configs(resource_name)
        return {name: value for name, value in stored.items() if name in DYNAMIC_BROKER_CONFIGS}

    def dynamic_broker(self) -> dict[str, str]:
        return self._dynamic(str(self.node_id))

    def dynamic_default(self) -> dict[str, str]:
        return self._dynamic("")

    def layers(self) -> list[tuple[dict[str, str], int]]:
        """Each layer's values with its DescribeConfigs source, highest precedence first."""
        return [
            (self.dynamic_broker(), SOURCE_DYNAMIC_BROKER),
            (self.dynamic_default(), SOURCE_DYNAMIC_DEFAULT_BROKER),
            (self.static.explicit_values(), SOURCE_STATIC_BROKER),
            (STATIC_DEFAULTS, SOURCE_DEFAULT),
        ]

    def props(self) -> dict[str, str]:
        """The settings given at any level, a higher level replacing a value and its synonyms."""
        props = self.static.explicit_values()
        for layer in (self.dynamic_default(), self.dynamic_broker()):
            for name, value in layer.items():
                for synonym in broker_config_synonyms(name):
                    props.pop(synonym, None)
                props[name] = value
        return props

    # ------------------------------------------------------------------ reads
    def current(self) -> BrokerConfig:
        """The effective settings (rebuilt only when a dynamic layer changed)."""
        built_from = (
            frozenset(self.dynamic_default().items()),
            frozenset(self.dynamic_broker().items()),
        )
        if built_from != self._built_from:
            self._built_from = built_from
            try:
                self._current = BrokerConfig(self.props())
                self._topic_defaults = self._current.topic_defaults()
            except ConfigError as exc:  # the controller validates; this is a stale record
                log.error("dynamic broker configs ignored: %s", exc)
                self._current = self.static
                self._topic_defaults = self.static.topic_defaults()
        return self._current

    def __getitem__(self, name: str) -> Any:
        return self.current()[name]

    def topic_defaults(self) -> dict[str, str]:
        """Every topic config's default on this broker now (a copy)."""
        self.current()
        return dict(self._topic_defaults)

    def value_of(self, name: str) -> str | None:
        """A setting's effective value as Kafka writes it; None for a setting that
        has no default and was not given (Kafka's ``log.retention.ms`` then)."""
        if name in NO_STATIC_DEFAULT and name not in self.props():
            return None
        return format_broker_value(self.current()[name])
