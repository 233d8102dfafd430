"""Query parameters of the console's API, checked: a bad one is a 400 naming it."""

from __future__ import annotations

from samsa.http.messages import HttpError, Request


def int_param(
    request: Request, name: str, default: int, *, low: int, high: int | None = None
) -> int:
    raw = request.query.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise HttpError(400, f"{name} must be an integer, not {raw!r}") from None
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise HttpError(400, f"{name} must be {bounds}, not {value}")
    return value


def choice_param(request: Request, name: str, choices: tuple[str, ...]) -> str:
    value = request.query.get(name, "") or choices[0]
    if value not in choices:
        raise HttpError(400, f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def page_window(request: Request, default_limit: int, max_limit: int) -> tuple[int, int]:
    """``offset`` and ``limit`` of a paginated list."""
    offset = int_param(request, "offset", 0, low=0)
    limit = int_param(request, "limit", default_limit, low=1, high=max_limit)
    return offset, limit
