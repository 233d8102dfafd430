"""Partition assignors run by the group leader: range, round-robin, cooperative-sticky."""

from __future__ import annotations

from typing import Any

from samsa.client.consumer.assignors.base import Assignment, Assignor
from samsa.client.consumer.assignors.range import RangeAssignor
from samsa.client.consumer.assignors.roundrobin import RoundRobinAssignor
from samsa.client.consumer.assignors.sticky import CooperativeStickyAssignor

__all__ = [
    "Assignment",
    "Assignor",
    "CooperativeStickyAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "build_assignors",
]

_BY_NAME: dict[str, type[Any]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}


def build_assignors(spec: tuple[Any, ...]) -> list[Assignor]:
    """Assignor objects for the configured names/objects, in preference order."""
    return [_BY_NAME[item]() if isinstance(item, str) else item for item in spec]
