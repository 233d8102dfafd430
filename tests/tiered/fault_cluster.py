"""The three-node tiered cluster the fault tests share, and the waits on what its leaders do.

``open_faults`` starts three combined nodes on loopback holding ``faults``
(three partitions, replication factor 3, ``min.insync.replicas=2``) with
tiering on and segments of 64 KiB, so copies run all the time: every three
seconds or so a segment of each partition rolls, its leader copies it to a bucket of
the session's S3Proxy and local retention removes it.  The brokers reach the
bucket through ``S3FaultProxy``, which can answer 5xx or stall; the server
itself can be paused.  Two idempotent acks=all producers (librdkafka and
Samsa) and a reader run all along (``tests.cluster.fault_run``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.cluster.fault_run import PARTITIONS, TOPIC, Run, open_run
from tests.tiered.broker_tiering import BROKER_SETTINGS
from tests.tiered.fault_checks import (
    FaultFigures,
    bucket_store,
    check_now,
    leaders_local_segments,
    s3_settings,
)

from samsa.testing.cluster import LocalCluster, wait_until
from samsa.testing.object_store import S3Server
from samsa.testing.s3_faults import S3FaultProxy
from samsa.tiered.store.s3 import S3RemoteStore

NODES = [1, 2, 3]
KAFKA_STORAGE_ERROR = 56
TOPIC_CONFIGS = {
    "remote.storage.enable": "true",
    "segment.bytes": "65536",
    "local.retention.bytes": "1",
}
SETTINGS = {
    **BROKER_SETTINGS,
    # Reads of the remote tier wait for the store this long, longer than the
    # client's own retries of a 5xx: a failing store answers an error, not silence.
    "remote.fetch.max.wait.ms": "3000",
    # Dangling copies and orphan objects are cleaned 3 s after they are seen.
    "remote.log.manager.orphan.grace.ms": "3000",
}


class Faults:
    """The module's run, its fault proxy, the bucket, and the figures per fault."""

    def __init__(self, run: Run, proxy: S3FaultProxy, server: S3Server, store: S3RemoteStore):
        self.run, self.proxy, self.server, self.store = run, proxy, server, store
        self.figures: list[FaultFigures] = []

    def check(self, fault: str) -> FaultFigures:
        figures = check_now(self.run, fault, self.store)
        self.figures.append(figures)
        return figures

    def finish(self) -> None:
        """The producers stop; the whole topic is read from offset 0 and
        checked once more, and no fault's figures may show a loss or a gap."""
        run = self.run
        for producer in run.producers:
            producer.finish(60)
            run.check_clients()
            assert producer.unresolved() == 0, f"{producer.name}: records never resolved"
            assert not producer.failures, producer.failures[:3]
        self.check("the end, producers stopped")
        for figures in self.figures:
            assert (figures.lost, figures.duplicates, figures.log_gaps, figures.reader_gaps) == (
                (0, 0, 0, 0)
            ), figures.line()


@contextmanager
def open_faults(
    base: Path, server: S3Server, proxy_host: str = "127.0.0.1", **cluster_options: Any
) -> Iterator[Faults]:
    """The cluster (``cluster_options`` as ``LocalCluster`` takes them: hosts
    and a command prefix for network namespaces), its run and the fault proxy
    on ``proxy_host`` in front of a new bucket."""
    bucket = server.create_bucket()
    store = bucket_store(server, bucket)
    try:
        with S3FaultProxy(server.port, proxy_host) as proxy:
            settings = {**SETTINGS, **s3_settings(server, bucket, proxy.endpoint)}
            with (
                LocalCluster(base, settings=settings, **cluster_options) as cluster,
                open_run(cluster, base, NODES, TOPIC_CONFIGS) as run,
            ):
                made = Faults(run, proxy, server, store)
                try:
                    yield made
                finally:
                    server.resume()
                    for figures in made.figures:
                        print(figures.line())
    finally:
        asyncio.run(store.close())


def leader(run: Run, partition: int) -> int:
    view = run.agreed_view()
    assert view is not None
    return view[partition].leader


def wait_lagging(faults: Faults, segments: int, what: str, timeout: float = 90) -> None:
    """Until every leader keeps at least ``segments`` local segments (their
    copies held back) while producers keep being acknowledged."""
    run = faults.run
    wait_until(
        lambda: run.check_clients() or min(leaders_local_segments(run).values()) >= segments,
        timeout,
        f"{segments} local segments on every leader ({what})",
    )


def log_marks(run: Run) -> dict[int, int]:
    """How many lines each node logged so far: what a wait on a later line starts from."""
    return {n: len(node.log_lines) for n, node in run.cluster.nodes.items()}


def wait_copies_retried(faults: Faults, marks: dict[int, int], what: str) -> None:
    """Until the leader of every partition logged, after ``marks``, that a copy
    of it failed retriably and will run again."""
    run = faults.run

    def retried(partition: int) -> bool:
        node = leader(run, partition)
        text = f"{TOPIC}-{partition}] copy will be retried"
        return any(text in line for line in run.cluster.nodes[node].log_lines[marks[node] :])

    wait_until(
        lambda: all(retried(p) for p in range(PARTITIONS)),
        60,
        f"a copy of every partition failing retriably ({what})",
    )


def wait_local_trimmed(faults: Faults, what: str, most: int = 3, timeout: float = 30) -> None:
    """Until local retention left every leader at most ``most`` segments:
    the copied ones go once their copy finished."""
    run = faults.run
    wait_until(
        lambda: max(leaders_local_segments(run).values()) <= most,
        timeout,
        f"at most {most} local segments on every leader ({what})",
    )


def copy_in_flight(run: Run, node: int, partition: int) -> int | None:
    """The base offset of the segment ``node`` is uploading for ``partition``
    (its log says it started and not that it finished), or None."""
    name = f"{TOPIC}-{partition}]"
    started: int | None = None
    for line in list(run.cluster.nodes[node].log_lines):
        if name not in line:
            continue
        found = re.search(r"\] (copying|copied) segment (\d+)", line)
        if found is None:
            continue
        base = int(found.group(2))
        if found.group(1) == "copying":
            started = base
        elif started == base:
            started = None
    return started


def wait_upload(faults: Faults, partition: int) -> tuple[int, int]:
    """With the store slowed to a second a request, until the leader of
    ``partition`` is uploading: (leader, base offset of the segment in flight)."""
    run = faults.run
    faults.proxy.delay(1.0)

    def uploading() -> tuple[int, int] | None:
        node = leader(run, partition)
        base = copy_in_flight(run, node, partition)
        return None if base is None else (node, base)

    return wait_until(uploading, 60, f"the leader of {TOPIC}-{partition} in an upload")
