"""Client configuration with Kafka's key names, defaults and validation.

Each key is declared once as a ``ConfigDef`` (name, parser, default, check).
``parse_config`` refuses unknown keys and bad values at construction with a
message naming the key, so a typo never silently falls back to a default.  The
common network keys are shared with the consumer and admin clients, which add
their own definitions on top (``COMMON_DEFS + THEIR_DEFS``).

Values are accepted in their natural Python type or as the strings a
properties file would hold (``"5"``, ``"true"``), as Kafka's ConfigDef does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from samsa.errors import ConfigError

INT32_MAX = 2**31 - 1

__all__ = [
    "COMMON_DEFS",
    "PRODUCER_DEFS",
    "ConfigDef",
    "at_least",
    "parse_bool",
    "parse_config",
    "parse_int",
    "parse_optional_callable",
]


@dataclass(frozen=True, slots=True)
class ConfigDef:
    name: str
    parse: Callable[[Any], Any]
    default: Any
    check: Callable[[Any], str | None] | None = None
    doc: str = ""


def parse_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value.strip())
    raise ValueError(f"expected an integer, got {type(value).__name__}")


def parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError("expected true or false")


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _servers(value: Any) -> list[tuple[str, int]]:
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[tuple[str, int]] = []
    for item in items:
        item = str(item).strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"{item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("at least one host:port is required")
    return out


def _acks(value: Any) -> int:
    if isinstance(value, str) and value.strip().lower() == "all":
        return -1
    acks = parse_int(value)
    if acks not in (-1, 0, 1):
        raise ValueError("must be 0, 1, -1 or all")
    return acks


_COMPRESSION = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def _compression(value: Any) -> int:
    name = _str(value).strip().lower()
    if name not in _COMPRESSION:
        raise ValueError(f"must be one of {', '.join(_COMPRESSION)}")
    return _COMPRESSION[name]


PARTITIONERS = ("murmur2_random", "consistent_random", "round_robin", "default")


def _partitioner(value: Any) -> Any:
    if callable(value):
        return value
    name = _str(value).strip().lower()
    if name not in PARTITIONERS:
        raise ValueError(f"must be a callable or one of {', '.join(PARTITIONERS)}")
    return name


def parse_optional_callable(value: Any) -> Any:
    if value is not None and not callable(value):
        raise ValueError("must be a callable or None")
    return value


def _interceptors(value: Any) -> list[Any]:
    items = list(value or [])
    for item in items:
        if not (hasattr(item, "on_send") and hasattr(item, "on_acknowledgement")):
            raise ValueError(f"{item!r} lacks on_send/on_acknowledgement")
    return items


def at_least(low: int) -> Callable[[Any], str | None]:
    return lambda v: None if v >= low else f"must be >= {low}"


def _between(low: int, high: int) -> Callable[[Any], str | None]:
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


COMMON_DEFS: tuple[ConfigDef, ...] = (
    ConfigDef("bootstrap.servers", _servers, None, doc="host:port list used to find the cluster"),
    ConfigDef("client.id", _str, "samsa"),
    ConfigDef("request.timeout.ms", parse_int, 30000, at_least(0)),
    ConfigDef("metadata.max.age.ms", parse_int, 300000, at_least(0)),
    ConfigDef("retry.backoff.ms", parse_int, 100, at_least(0)),
    ConfigDef("retry.backoff.max.ms", parse_int, 1000, at_least(0)),
    ConfigDef("reconnect.backoff.ms", parse_int, 50, at_least(0)),
    ConfigDef("reconnect.backoff.max.ms", parse_int, 1000, at_least(0)),
    ConfigDef("connections.max.idle.ms", parse_int, 540000),
    ConfigDef("socket.connection.setup.timeout.ms", parse_int, 10000, at_least(0)),
    ConfigDef("send.buffer.bytes", parse_int, 131072, at_least(-1), "-1: OS default"),
    ConfigDef("receive.buffer.bytes", parse_int, 65536, at_least(-1), "-1: OS default"),
    ConfigDef("socket.keepalive.enable", parse_bool, True),
    ConfigDef("socket.nagle.disable", parse_bool, True, doc="TCP_NODELAY"),
    ConfigDef(
        "security.protocol", _str, "PLAINTEXT", doc="PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
    ),
    ConfigDef("ssl.truststore.type", _str, "PEM", doc="PEM only"),
    ConfigDef("ssl.truststore.location", _str, "", doc="PEM file of trusted CAs"),
    ConfigDef("ssl.truststore.certificates", _str, "", doc="inline PEM of trusted CAs"),
    ConfigDef("ssl.keystore.type", _str, "PEM", doc="PEM only"),
    ConfigDef("ssl.keystore.location", _str, "", doc="PEM file: client key and certificate"),
    ConfigDef("ssl.keystore.certificate.chain", _str, "", doc="inline PEM certificate chain"),
    ConfigDef("ssl.keystore.key", _str, "", doc="inline PEM private key"),
    ConfigDef("ssl.key.password", _str, "", doc="password of an encrypted PEM key"),
    ConfigDef("ssl.enabled.protocols", _str, "TLSv1.2,TLSv1.3"),
    ConfigDef("ssl.endpoint.identification.algorithm", _str, "https", doc="empty: no host check"),
    ConfigDef("sasl.mechanism", _str, "GSSAPI", doc="PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
    ConfigDef("sasl.jaas.config", _str, "", doc='... required username="..." password="...";'),
    ConfigDef(
        "sasl.oauthbearer.token.provider",
        parse_optional_callable,
        None,
        doc="OAUTHBEARER: a callable returning the token (a JWS) for each login",
    ),
)

PRODUCER_DEFS: tuple[ConfigDef, ...] = (
    ConfigDef("acks", _acks, -1),
    ConfigDef("linger.ms", parse_int, 5, at_least(0)),
    # 256 KiB, not Kafka's 16 KiB: a batch costs this client a fixed amount of
    # Python work (encode, request, response, futures), so at Kafka's size the
    # per-batch cost caps a Python producer at about a quarter of librdkafka's
    # default rate (librdkafka itself batches up to 1 MB).  Memory stays bounded
    # by buffer.memory (128 open batches at the default 32 MiB).
    ConfigDef("batch.size", parse_int, 262144, at_least(0)),
    ConfigDef("buffer.memory", parse_int, 33554432, at_least(0)),
    ConfigDef("max.block.ms", parse_int, 60000, at_least(0)),
    ConfigDef("max.request.size", parse_int, 1048576, at_least(1)),
    ConfigDef("compression.type", _compression, 0),
    ConfigDef("retries", parse_int, INT32_MAX, at_least(0)),
    ConfigDef("delivery.timeout.ms", parse_int, 120000, at_least(0)),
    ConfigDef("max.in.flight.requests.per.connection", parse_int, 5, at_least(1)),
    ConfigDef("partitioner", _partitioner, "default"),
    ConfigDef("partitioner.ignore.keys", parse_bool, False),
    ConfigDef("key.serializer", parse_optional_callable, None),
    ConfigDef("value.serializer", parse_optional_callable, None),
    ConfigDef("interceptors", _interceptors, []),
    ConfigDef("enable.idempotence", parse_bool, True),
    ConfigDef("transaction.timeout.ms", parse_int, 60000, at_least(0)),
    ConfigDef("transactional.id", _str, None),
)


def parse_config(
    defs: Iterable[ConfigDef], values: Mapping[str, Any], what: str = "client"
) -> dict[str, Any]:
    """Validate ``values`` against ``defs``; returns every key with its value.

    Raises ConfigError for an unknown key (naming close matches), a value that
    does not parse, a failed check, or a required key (default None) left unset.
    """
    by_name = {d.name: d for d in defs}
    unknown = [k for k in values if k not in by_name]
    if unknown:
        hint = ""
        for key in unknown:
            near = [
                n for n in by_name if n.replace(".", "") == key.replace("_", "").replace(".", "")
            ]
            if near:
                hint = f" (did you mean {near[0]!r}? Kafka's dotted names are required)"
        raise ConfigError(f"unknown {what} config {', '.join(map(repr, unknown))}{hint}")
    out: dict[str, Any] = {}
    for name, d in by_name.items():
        if name not in values:
            if d.default is None and d.name == "bootstrap.servers":
                raise ConfigError(f"{what} config {name!r} is required")
            out[name] = d.default
            continue
        raw = values[name]
        try:
            value = d.parse(raw)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"invalid value {raw!r} for {what} config {name!r}: {exc}") from None
        problem = d.check(value) if d.check is not None else None
        if problem:
            raise ConfigError(f"invalid value {raw!r} for {what} config {name!r}: {problem}")
        out[name] = value
    return out


def validate_producer(cfg: dict[str, Any]) -> None:
    """Cross-key rules of the Java producer (KafkaProducer's constructor checks)."""
    if cfg["transactional.id"] is not None and not cfg["enable.idempotence"]:
        raise ConfigError("transactional.id requires enable.idempotence=true")
    if cfg["enable.idempotence"]:
        if cfg["acks"] != -1:
            raise ConfigError("enable.idempotence=true requires acks=all (-1)")
        if cfg["max.in.flight.requests.per.connection"] > 5:
            raise ConfigError(
                "enable.idempotence=true requires max.in.flight.requests.per.connection <= 5"
            )
        if cfg["retries"] == 0:
            raise ConfigError("enable.idempotence=true requires retries > 0")
    if cfg["delivery.timeout.ms"] < cfg["linger.ms"] + cfg["request.timeout.ms"]:
        raise ConfigError(
            "delivery.timeout.ms must be >= linger.ms + request.timeout.ms "
            f"({cfg['delivery.timeout.ms']} < {cfg['linger.ms']} + {cfg['request.timeout.ms']})"
        )
