"""Log levels changed at runtime: the BROKER_LOGGER config resource (KIP-412).

``kafka-configs --entity-type broker-loggers`` and admin clients describe and
set a broker's log levels through DescribeConfigs / IncrementalAlterConfigs on
resource type 8, named by the broker id.  Unlike other configs these are not
stored in the metadata log: they change this process only, until it restarts
(Kafka's ``RuntimeLoggerManager``).  Levels use Kafka's names; Python has no
FATAL or TRACE, so FATAL is CRITICAL and TRACE a level below DEBUG.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from samsa.errors import ErrorCode, KafkaError

ROOT_LOGGER = "root"
SOURCE_DYNAMIC_BROKER_LOGGER = 6
OP_SET, OP_DELETE = 0, 1
TRACE = logging.DEBUG - 5
LEVELS = {
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
}
_OPERATION_NAMES = {2: "APPEND", 3: "SUBTRACT"}

log = logging.getLogger(__name__)


def _logger(name: str) -> logging.Logger:
    if name == ROOT_LOGGER:
        return logging.getLogger()
    known = logging.Logger.manager.loggerDict.get(name)
    if not isinstance(known, logging.Logger):
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Logger {name} does not exist!")
    return known


def level_name(level: int) -> str:
    """Kafka's name for a Python level (the nearest one at or above it)."""
    for name, value in sorted(LEVELS.items(), key=lambda item: item[1]):
        if level <= value:
            return name
    return "FATAL"


def describe(keys: Iterable[str] | None) -> list[dict[str, Any]]:
    """Every logger with its effective level (``keys``: only those names)."""
    existing = logging.Logger.manager.loggerDict.items()
    names = [ROOT_LOGGER, *sorted(n for n, lg in existing if isinstance(lg, logging.Logger))]
    wanted = None if keys is None else set(keys)
    return [
        {
            "name": name,
            "value": level_name(_logger(name).getEffectiveLevel()),
            "read_only": False,
            "config_source": SOURCE_DYNAMIC_BROKER_LOGGER,
            "is_sensitive": False,
            "synonyms": [],
            "config_type": 0,
            "documentation": None,
        }
        for name in names
        if wanted is None or name in wanted
    ]


def _check(op: dict[str, Any]) -> logging.Logger:
    name, kind = op["name"], op["config_operation"]
    if kind in _OPERATION_NAMES:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"{_OPERATION_NAMES[kind]} operation is not allowed for the BROKER_LOGGER resource",
        )
    if kind not in (OP_SET, OP_DELETE):
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Unknown operation type {kind} is not allowed for the BROKER_LOGGER resource",
        )
    logger = _logger(name)
    if kind == OP_SET and op["value"] not in LEVELS:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"Cannot set the log level of {name} to {op['value']} as it is not a supported "
            f"log level. Valid log levels are {', '.join(sorted(LEVELS))}",
        )
    if kind == OP_DELETE and name == ROOT_LOGGER:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Removing the log level of the {ROOT_LOGGER} logger is not allowed",
        )
    return logger


def alter(ops: list[dict[str, Any]], *, validate_only: bool) -> None:
    """Check every operation, then (unless validating) apply them all."""
    loggers = [_check(op) for op in ops]
    if validate_only:
        return
    for op, logger in zip(ops, loggers, strict=True):
        if op["config_operation"] == OP_SET:
            logger.setLevel(LEVELS[op["value"]])
            log.warning("Updated the log level of %s to %s", op["name"], op["value"])
        else:
            logger.setLevel(logging.NOTSET)
            log.warning("Unset the log level of %s", op["name"])
