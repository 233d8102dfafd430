"""What the Admin's per-API helper modules need from it, as a Protocol.

The helpers (topics, configs, groups, elections, ...) are called by
:class:`~samsa.client.admin.admin.Admin` (and its base ``SecurityAdmin``) and
call back into its plumbing: one request to a node, answered or failed within
a deadline, a Metadata answer, and the node ids of the controller, of a
group's coordinator and of every broker.  Naming that narrow surface here
lets them type their ``admin`` argument without importing Admin, which imports
them.  The members stay private: they are the package's plumbing, not part of
the public Admin API.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from samsa.client.admin.results import TopicDescription


class AdminPlumbing(Protocol):
    def _call(
        self, node_id: int | None, api_key: int, body: dict[str, Any], timeout_ms: int
    ) -> Any:
        """Send to ``node_id`` (None: the least loaded broker) and wait for the answer."""

    def _metadata(self, topics: list[str] | None, timeout_ms: int) -> dict[str, Any]:
        """A Metadata answer for ``topics`` (None: every topic) from any broker."""

    def _controller(self, timeout_ms: int) -> int:
        """The active controller's node id (refreshing the brokers known)."""

    def _coordinator(self, group_id: str, timeout_ms: int) -> int:
        """The node id of the group's coordinator."""

    def _broker_ids(self) -> list[int]:
        """Every broker the last metadata answer named, in id order."""


class TopicsPlumbing(AdminPlumbing, Protocol):
    """The plumbing and ``describe_topics``, for a helper that starts from the
    topics' partitions (log_dirs); the Admin's security base, which has no
    topic calls, needs only :class:`AdminPlumbing`."""

    def describe_topics(
        self, topics: Iterable[str], timeout: float | None = None
    ) -> dict[str, TopicDescription]: ...
