"""Topic, broker and group configs: validation, ConfigRecords, and the settings they imply.

Kafka's ``ConfigurationControlManager``.  Configs live in the image per
(resource type, resource name); a change is a ConfigRecord per key (a null value
deletes it).  Topic overrides are checked the way the single-node broker always
checked them: the broker's topic defaults plus the overrides must parse as a
``LogConfig`` (unknown keys and bad values are INVALID_CONFIG, with LogConfig's
message).  Broker configs (resource name "" for the cluster default, or a
registered broker id) accept the settings a running broker can change
(``DYNAMIC_BROKER_CONFIGS``: the broker-level names of topic settings such as
log.retention.ms, message.max.bytes, min.insync.replicas, and a few others);
the broker applies them when the records reach it.

Effective topic settings the controller itself needs (min.insync.replicas,
unclean.leader.election.enable) resolve topic override, then the cluster-wide
dynamic default, then the broker's static topic defaults, then Kafka's default.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from samsa.config.broker_config import BrokerConfig
from samsa.config.broker_keys import KEYS as BROKER_KEYS
from samsa.config.group_configs import validate_group_configs
from samsa.config.synonyms import (
    DYNAMIC_BROKER_CONFIGS,
    TOPIC_CONFIG_SYNONYMS,
    Synonym,
    listener_ssl_setting,
    topic_defaults,
)
from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import (
    RESOURCE_BROKER,
    RESOURCE_GROUP,
    RESOURCE_TOPIC,
    MetadataImage,
)
from samsa.errors import ConfigError, ErrorCode, KafkaError
from samsa.protocol.metadata_records import MetadataRecord, make_record
from samsa.storage.topic_config.log_config import (
    LOG_CONFIG_BY_NAME,
    LOG_CONFIG_KEYS,
    LogConfig,
    format_value,
)
from samsa.storage.topic_config.remote_rules import validate_remote_storage

OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3

# DescribeConfigs / CreateTopics config sources.
SOURCE_TOPIC_CONFIG, SOURCE_DYNAMIC_DEFAULT_BROKER, SOURCE_STATIC_BROKER, SOURCE_DEFAULT = (
    1,
    3,
    4,
    5,
)
_TOPIC_KEY_OF_BROKER = {chain[0].name: topic for topic, chain in TOPIC_CONFIG_SYNONYMS.items()}


def _first_synonym(
    topic_config: str, chain: tuple[Synonym, ...], props: Mapping[str, str]
) -> str | None:
    for synonym in chain:
        raw = props.get(synonym.name)
        if raw is not None:
            try:
                return synonym.to_topic_value(topic_config, raw)
            except ConfigError:  # stored before a rule tightened: ignored, as Kafka does
                return None
    return None


class ConfigControl:
    """Config changes and lookups over the committed image."""

    def __init__(self, image: MetadataImage, config: ControllerConfig) -> None:
        self.image = image
        self.config = config
        # topic_defaults() (and their LogConfig) by the cluster-wide configs they came from.
        self._defaults_cache: (
            tuple[frozenset[tuple[str, str]], dict[str, tuple[str, int]], LogConfig | None] | None
        ) = None

    # ------------------------------------------------------------------ lookups
    def topic_defaults(self) -> dict[str, tuple[str, int]]:
        """Each topic config's default now, with its DescribeConfigs source: the
        cluster-wide dynamic default (from the image), else this controller's
        static settings, else Kafka's default (Kafka's resolveEffectiveTopicConfigs)."""
        return dict(self._resolved_defaults()[0])

    def _resolved_defaults(self) -> tuple[dict[str, tuple[str, int]], LogConfig | None]:
        """The defaults and (once asked for) their parsed LogConfig, rebuilt only
        when the cluster-wide dynamic configs changed."""
        cluster = self.image.configs.get((RESOURCE_BROKER, ""), {})
        cache_key = frozenset(cluster.items())
        cached = self._defaults_cache
        if cached is not None and cached[0] == cache_key:
            return cached[1], cached[2]
        dynamic = {k: v for k, v in cluster.items() if k in DYNAMIC_BROKER_CONFIGS}
        static = self.config.static_broker_props
        defaults = {}
        for key in LOG_CONFIG_KEYS:
            chain = TOPIC_CONFIG_SYNONYMS.get(key.name, ())
            value = _first_synonym(key.name, chain, dynamic)
            if value is not None:
                defaults[key.name] = (value, SOURCE_DYNAMIC_DEFAULT_BROKER)
                continue
            value = self.config.topic_defaults.get(key.name)
            if value is None:
                defaults[key.name] = (format_value(key, key.default), SOURCE_DEFAULT)
            else:
                given = any(synonym.name in static for synonym in chain)
                defaults[key.name] = (value, SOURCE_STATIC_BROKER if given else SOURCE_DEFAULT)
        self._defaults_cache = (cache_key, defaults, None)
        return defaults, None

    def effective_topic_config(self, overrides: Mapping[str, str]) -> dict[str, str]:
        """Topic defaults with a topic's overrides on top (what a topic runs with)."""
        merged = {name: value for name, (value, _) in self.topic_defaults().items()}
        merged.update(overrides)
        return merged

    def topic_config_entries(self, overrides: Mapping[str, str]) -> list[dict[str, Any]]:
        """CreateTopics' per-config rows: value and source of every topic config."""
        rows = []
        for name, (value, source) in sorted(self.topic_defaults().items()):
            if name in overrides:
                value, source = overrides[name], SOURCE_TOPIC_CONFIG
            rows.append(
                {
                    "name": name,
                    "value": value,
                    "read_only": False,
                    "config_source": source,
                    "is_sensitive": False,
                }
            )
        return rows

    def _topic_setting(self, topic: str, key: str) -> str | None:
        value = self.image.configs.get((RESOURCE_TOPIC, topic), {}).get(key)
        if value is None:
            value = self.image.configs.get((RESOURCE_BROKER, ""), {}).get(key)
        if value is None:
            value = self.config.topic_defaults.get(key)
        return value

    def unclean_leader_election_enabled(self, topic: str) -> bool:
        value = self._topic_setting(topic, "unclean.leader.election.enable")
        return value is not None and value.strip().lower() == "true"

    def min_insync_replicas(self, topic: str) -> int:
        value = self._topic_setting(topic, "min.insync.replicas")
        try:
            return int(value) if value is not None else 1
        except ValueError:
            return 1

    # ------------------------------------------------------------------ validation
    def validate_topic_configs(
        self, overrides: Mapping[str, str], existing: Mapping[str, str] | None = None
    ) -> None:
        """Raise KafkaError(INVALID_CONFIG) unless the overrides make a valid LogConfig
        that follows Kafka's tiered-storage rules (``remote_rules``; ``existing``:
        the topic's overrides before a change)."""
        try:
            config = LogConfig.from_dict(overrides, base=self._default_log_config())
            validate_remote_storage(
                config,
                existing or {},
                system_enabled=self.config.remote_log_storage_system_enable,
            )
        except ConfigError as exc:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(exc)) from None

    def _default_log_config(self) -> LogConfig:
        """The topic defaults parsed once per change of them (only a request's
        overrides are parsed each time)."""
        defaults, parsed = self._resolved_defaults()
        if parsed is None:
            try:
                parsed = LogConfig.from_dict({name: v for name, (v, _) in defaults.items()})
            except ConfigError as exc:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"topic defaults: {exc}") from None
            assert self._defaults_cache is not None
            self._defaults_cache = (self._defaults_cache[0], defaults, parsed)
        return parsed

    @staticmethod
    def validate_broker_configs(configs: Mapping[str, str]) -> None:
        """Kafka's DynamicBrokerConfig.validateConfigs: settings that need a
        restart and bad values are INVALID_REQUEST (as Kafka answers for broker
        resources); names no broker has are INVALID_CONFIG (Kafka would store
        them as custom settings; Samsa refuses typos, as at startup)."""
        configs = {k: v for k, v in configs.items() if listener_ssl_setting(k) is None}
        static_only = sorted(
            name for name in configs if name in BROKER_KEYS and name not in DYNAMIC_BROKER_CONFIGS
        )
        if static_only:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                f"Cannot update these configs dynamically: Set({', '.join(static_only)})",
            )
        unknown = sorted(name for name in configs if name not in BROKER_KEYS)
        if unknown:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG, f"Unknown broker configs: {', '.join(unknown)}"
            )
        try:
            topic_defaults(BrokerConfig(configs).explicit_values())
        except ConfigError as exc:
            raise KafkaError(ErrorCode.INVALID_REQUEST, str(exc)) from None

    def _check_resource(self, resource_type: int, resource_name: str) -> None:
        if resource_type == RESOURCE_TOPIC:
            if resource_name not in self.image.topics:
                raise KafkaError(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    f"topic {resource_name!r} does not exist",
                )
        elif resource_type == RESOURCE_GROUP:
            if not resource_name:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
        elif resource_type == RESOURCE_BROKER:
            if resource_name == "":
                return
            try:
                broker_id = int(resource_name)
            except ValueError:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST, f"invalid broker name {resource_name!r}"
                ) from None
            if broker_id not in self.image.brokers:
                raise KafkaError(
                    ErrorCode.BROKER_ID_NOT_REGISTERED, f"no broker with id {broker_id} found"
                )
        else:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, f"resource type {resource_type} is not supported"
            )

    def _validate(
        self,
        resource_type: int,
        configs: Mapping[str, str],
        touched: set[str] | None = None,
        resource_name: str = "",
    ) -> None:
        """Topic configs are checked as a whole; broker configs only where the
        request touched them (one stored before a rule tightened must not block
        every later change, as Kafka drops such values when it reads them)."""
        if resource_type == RESOURCE_TOPIC:
            existing = self.image.configs.get((RESOURCE_TOPIC, resource_name), {})
            self.validate_topic_configs(configs, existing)
        elif resource_type == RESOURCE_GROUP:
            props = self.config.static_broker_props
            validate_group_configs(configs, lambda key: props.get(key, BROKER_KEYS[key].default))
        else:
            self.validate_broker_configs(
                {k: v for k, v in configs.items() if touched is None or k in touched}
            )

    # ------------------------------------------------------------------ records
    def records_for(
        self, resource_type: int, resource_name: str, new: Mapping[str, str]
    ) -> list[MetadataRecord]:
        """ConfigRecords that take the resource's configs from the image to ``new``."""
        current = self.image.configs.get((resource_type, resource_name), {})
        records = []
        for name in sorted(set(current) | set(new)):
            value = new.get(name)
            if current.get(name) != value:
                records.append(
                    make_record(
                        "ConfigRecord",
                        resource_type=resource_type,
                        resource_name=resource_name,
                        name=name,
                        value=value,
                    )
                )
        return records

    def _apply_op(
        self,
        current: dict[str, str],
        resource_type: int,
        op: Mapping[str, Any],
    ) -> None:
        name, value, kind = op["name"], op.get("value"), op["config_operation"]
        if kind == OP_SET:
            if value is None:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"SET of {name} needs a value")
            current[name] = value
        elif kind == OP_DELETE:
            current.pop(name, None)
        elif kind in (OP_APPEND, OP_SUBTRACT):
            topic_name = name if resource_type == RESOURCE_TOPIC else _TOPIC_KEY_OF_BROKER.get(name)
            key = LOG_CONFIG_BY_NAME.get(topic_name) if topic_name is not None else None
            if key is None or key.type.value != "LIST":
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG, f"{name} is not a list: APPEND/SUBTRACT need one"
                )
            if resource_type == RESOURCE_TOPIC:
                base = self.effective_topic_config(current).get(name)
            else:
                base = current.get(name)
            if base is None:
                base = format_value(key, key.default)
            items = [v for v in base.split(",") if v]
            given = [v for v in (value or "").split(",") if v]
            if kind == OP_APPEND:
                items += [v for v in given if v not in items]
            else:
                items = [v for v in items if v not in given]
            current[name] = ",".join(items)
        else:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"unknown config operation {kind}")

    # ------------------------------------------------------------------ operations
    def incremental_alter_configs(self, request: Mapping[str, Any]) -> ControllerResult:
        """IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT per key."""

        def changed(rtype: int, rname: str, entries: list[Any]) -> dict[str, str]:
            current = dict(self.image.configs.get((rtype, rname), {}))
            for op in entries:
                self._apply_op(current, rtype, op)
            return current

        return self._alter(request, changed, incremental=True)

    def alter_configs(self, request: Mapping[str, Any]) -> ControllerResult:
        """AlterConfigs (the legacy form): the given keys replace all overrides."""
        return self._alter(
            request,
            lambda rtype, rname, entries: {c["name"]: c["value"] for c in entries},
            incremental=False,
        )

    def _alter(
        self,
        request: Mapping[str, Any],
        changed: Callable[[int, str, list[Any]], dict[str, str]],
        *,
        incremental: bool,
    ) -> ControllerResult:
        """Both alter APIs: Kafka's request checks (each resource once, each key
        once per resource, no null values but for DELETE), then the resource's
        new configs are validated and written as ConfigRecords."""
        records: list[MetadataRecord] = []
        responses = []
        counts = Counter((r["resource_type"], r["resource_name"]) for r in request["resources"])
        for resource in request["resources"]:
            rtype, rname = resource["resource_type"], resource["resource_name"]
            entries = resource["configs"]
            try:
                if counts[(rtype, rname)] > 1:
                    raise KafkaError(
                        ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."
                    )
                _check_entries(entries, incremental)
                self._check_resource(rtype, rname)
                new = changed(rtype, rname, entries)
                touched = {entry["name"] for entry in entries} if incremental else None
                self._validate(rtype, new, touched, rname)
                records.extend(self.records_for(rtype, rname, new))
                responses.append(_alter_response(rtype, rname, None))
            except KafkaError as exc:
                responses.append(_alter_response(rtype, rname, exc))
        if request.get("validate_only", False):
            records = []
        return ControllerResult(records, {"throttle_time_ms": 0, "responses": responses})


def _check_entries(entries: list[Any], incremental: bool) -> None:
    """Kafka's ConfigAdminManager checks: INVALID_REQUEST for a key given twice
    or a null value (allowed only to DELETE in the incremental form)."""
    names = [entry["name"] for entry in entries]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [
        entry["name"]
        for entry in entries
        if entry.get("value") is None
        and not (incremental and entry.get("config_operation") == OP_DELETE)
    ]
    if nulls:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"Null value not supported for : {', '.join(nulls)}"
        )


def _alter_response(rtype: int, rname: str, exc: KafkaError | None) -> dict[str, Any]:
    return {
        "error_code": int(exc.code) if exc else 0,
        "error_message": str(exc) if exc else None,
        "resource_type": rtype,
        "resource_name": rname,
    }
