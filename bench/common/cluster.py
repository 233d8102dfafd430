"""What the cluster benchmarks share: a LocalCluster in a scratch dir, one request
to one node, bounded waits, percentiles and spreads, and the settings table.

The quorum and replication benchmarks measure real ``samsa broker`` processes
(``samsa.testing.cluster.LocalCluster``), so a figure includes the sockets, the
event loop and the disk, as an operator's cluster would.  Every wait here ends
the moment its condition holds and is bounded, so a broken cluster fails the
run with what it was waiting for instead of hanging it.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from samsa.testing.cluster import FAST_SETTINGS, LocalCluster, call, node_metadata, wait_until

# Shared with the cluster tests (samsa.testing.cluster), re-exported for the benches.
__all__ = ["call", "node_metadata", "wait_until"]

# Kafka's defaults for the settings the benchmarks vary; the printed settings
# table shows these unless a run overrides them.
KAFKA_DEFAULTS = {
    "controller.quorum.election.timeout.ms": "1000",
    "controller.quorum.fetch.timeout.ms": "2000",
    "controller.quorum.election.backoff.max.ms": "1000",
    "controller.quorum.request.timeout.ms": "2000",
    "broker.heartbeat.interval.ms": "2000",
    "broker.session.timeout.ms": "9000",
    "replica.lag.time.max.ms": "30000",
    "replica.fetch.backoff.ms": "1000",
    "replica.fetch.wait.max.ms": "500",
}
assert set(FAST_SETTINGS) <= set(KAFKA_DEFAULTS)


@contextmanager
def local_cluster(
    controllers: int,
    brokers: int = 0,
    settings: Mapping[str, str] | None = None,
    *,
    start: bool = True,
) -> Iterator[LocalCluster]:
    """A started cluster with Kafka's defaults plus ``settings``, killed and removed after.

    ``fast=False``: a benchmark states every timeout it depends on, so none
    comes silently from the test harness's shortened ones.
    """
    with tempfile.TemporaryDirectory(prefix="samsa-bench-") as tmp:
        cluster = LocalCluster(
            Path(tmp), controllers=controllers, brokers=brokers, settings=dict(settings or {}),
            fast=False,
        )  # fmt: skip
        try:
            if start:
                cluster.start(timeout=120)
            yield cluster
        except BaseException:
            for node_id, node in cluster.nodes.items():  # what the brokers said last
                alive = node.proc is not None and node.proc.poll() is None
                print(f"--- node {node_id} ({'running' if alive else 'exited'}), last lines:")
                print("\n".join(node.log_text().splitlines()[-25:]))
            raise
        finally:
            cluster.close()


def effective(settings: Mapping[str, str]) -> dict[str, str]:
    """The varied settings as a run sees them: Kafka's defaults, then the overrides."""
    return {**KAFKA_DEFAULTS, **settings}


def print_settings(title: str, settings: Mapping[str, str]) -> None:
    print(f"settings ({title}):")
    for key, value in sorted(settings.items()):
        print(f"  {key}={value}")


def percentile(values: Iterable[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): a value that was measured, not interpolated."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def spread(values: list[float], fmt: str = "{:.0f}") -> str:
    """``min / median / max`` of repeated runs, the median in bold (markdown)."""
    if not values:
        return "-"
    lo, mid, hi = min(values), statistics.median(values), max(values)
    return f"{fmt.format(lo)} / **{fmt.format(mid)}** / {fmt.format(hi)}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table (pastes into the README as printed)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A /proc/PID/status memory field in MB (10^6 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024 / 1e6
    return float("nan")


def machine_line() -> str:
    """What the figures were measured on (the house rules ask for it)."""
    import platform

    load = os.getloadavg()
    return (
        f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )


def cache_broker_bytecode() -> str:
    """Brokers started after this compile their sources once into a cache
    outside the tree, as an installed broker would, even where the shell
    disables writing bytecode: under PYTHONDONTWRITEBYTECODE (our machines)
    every restarted broker compiled all of samsa again, about 1.3 s of each
    timed restart that measured Python's compiler, not the broker.  Returns a
    line for the output."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    prefix = os.environ.setdefault(
        "PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "samsa-pycache")
    )
    return f"broker bytecode cached in {prefix}"
