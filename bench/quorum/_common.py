"""What the quorum benchmark's cases share: a ``samsa.client.Admin`` on a cluster and
one run's latency percentiles.

Shared plumbing of ``quorum_bench.py``, kept apart from its cases
(``_quorum_latency``, ``_quorum_failover``, ``_quorum_snapshot``, one a module) so
each reads on its own.
"""

from __future__ import annotations

from bench.common.cluster import percentile
from samsa.client import Admin


def admin(bootstrap: str, timeout_ms: int = 10_000) -> Admin:
    return Admin({"bootstrap.servers": bootstrap, "request.timeout.ms": timeout_ms})


def record_run(
    stats: dict[str, list[float]], values: list[float], label: str, run: int, who: str
) -> None:
    """Add one run's p50, p99 and max (ms) to ``stats`` and print them."""
    p50, p99 = percentile(values, 50), percentile(values, 99)
    stats["p50"].append(p50)
    stats["p99"].append(p99)
    stats["max"].append(max(values))
    print(
        f"[{label}] run {run + 1} {who:9s} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
        f"max {max(values):6.1f} ms  ({len(values)} topics)",
        flush=True,
    )
