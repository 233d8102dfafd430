"""What every console action shares: reading its JSON body's fields, turning a
Kafka error code into an HTTP status, and the typed confirmation destructive
actions need."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from samsa.console.context import ConsoleContext
from samsa.errors import ErrorCode
from samsa.http.messages import HttpError

TIMEOUT_MS = 30_000
STATUS_OF = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: 404,
    ErrorCode.GROUP_ID_NOT_FOUND: 404,
    ErrorCode.TOPIC_ALREADY_EXISTS: 409,
    ErrorCode.NON_EMPTY_GROUP: 409,
    ErrorCode.UNKNOWN_MEMBER_ID: 409,
    ErrorCode.REQUEST_TIMED_OUT: 503,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: 503,
    ErrorCode.NOT_COORDINATOR: 503,
    ErrorCode.NOT_CONTROLLER: 503,
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: 403,
    ErrorCode.GROUP_AUTHORIZATION_FAILED: 403,
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: 403,
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 403,
    ErrorCode.SECURITY_DISABLED: 409,
}

Action = Callable[[ConsoleContext, dict[str, Any]], Awaitable[dict[str, Any]]]


def field(body: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    """``body[name]`` of type ``kind`` (400 naming it otherwise); required unless
    a ``default`` is given."""
    value = body.get(name, default)
    if value is None and default is None:
        raise HttpError(400, f"{name} is required")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise HttpError(400, f"{name} must be an integer, not {value!r}")
    if kind is str and not isinstance(value, str):
        raise HttpError(400, f"{name} must be a string, not {value!r}")
    return value


def check(code: int, message: str | None, what: str) -> None:
    """Nothing for 0; else the HTTP error a Kafka error code means here."""
    if code:
        name = ErrorCode(code).name
        raise HttpError(STATUS_OF.get(ErrorCode(code), 400), f"{what}: {message or name} ({name})")


def confirmed(body: dict[str, Any], topic: str, what: str) -> None:
    """A destructive action names its topic twice: ``topic`` and ``confirm``
    (what the page makes the user type), so a slip cannot delete data."""
    if body.get("confirm") != topic:
        raise HttpError(
            400, f"{what} needs confirm set to the topic's name ({topic!r}), typed to confirm"
        )
