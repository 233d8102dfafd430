"""What the quorum benchmark's cases share: a ``samsa.client.Admin`` on a cluster.

Shared plumbing of ``quorum_bench.py``, kept apart from its cases
(``_quorum_latency``, ``_quorum_failover``, ``_quorum_snapshot``, one a module) so
each reads on its own.
"""

from __future__ import annotations

from samsa.client import Admin


def admin(bootstrap: str, timeout_ms: int = 10_000) -> Admin:
    return Admin({"bootstrap.servers": bootstrap, "request.timeout.ms": timeout_ms})
