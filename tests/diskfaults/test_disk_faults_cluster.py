"""No acknowledged record is lost when a leader's disk fills or fails.

Three combined broker+controller nodes, each with its data dir on its own
64 MB tmpfs, hold a topic with replication factor 3 and
``min.insync.replicas=2``; a librdkafka and a Samsa producer (acks=all,
idempotent) and a consumer run all along (``tests.cluster.fault_run``).
One after another, each on the node leading a partition:

1. its disk fills (a real ENOSPC: a filler file takes the tmpfs's last byte);
2. its fsyncs of partition data fail with EIO (``samsa.storage.files.io_faults``,
   since this kernel has no device-mapper ``dm-error``).

(An EIO on write takes the same path as ENOSPC; tests/storage covers it.)

Each time the node must take its log dir offline, answer KAFKA_STORAGE_ERROR,
stop with status 1 (its only log dir failed), and its leaderships must move to
the other in-sync replicas while the producers keep being acknowledged there.
Then the fault is healed (the filler removed, the rule dropped), the node
restarts, recovers its unclean logs and rejoins every ISR.  At the end
``finish_and_check`` proves that no acknowledged record was lost, duplicated or
reordered, that no record failed, and that every replica's log equals its
leader's batch for batch.  The producers must have been told of each fault
(errors and retries, never silence).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from tests.cluster.fault_run import TOPIC, Run, finish_and_check, open_run
from tests.diskfaults.disk import fill, small_tmpfs

from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NODES = [1, 2, 3]
STORAGE_ERROR_TEXTS = ("KAFKA_STORAGE_ERROR", "Disk error")


@pytest.fixture
def run(tmp_path: Path, rules: Path) -> Iterator[Run]:
    with ExitStack() as stack:
        for n in NODES:
            stack.enter_context(small_tmpfs(tmp_path / f"node-{n}", "64m"))
        cluster = stack.enter_context(
            # Partition data is fsynced every 300 ms, so an fsync fault shows at once.
            LocalCluster(tmp_path, controllers=3, settings={"log.flush.interval.ms": "300"})
        )
        yield stack.enter_context(open_run(cluster, tmp_path, NODES))


def _fail_a_leaders_disk(
    run: Run,
    partition: int,
    what: str,
    inject: Callable[[Path], object],
    heal: Callable[[], object],
) -> None:
    victim = run.agreed_view()[partition].leader  # type: ignore[index]
    node = run.cluster.nodes[victim]

    def fault() -> None:
        inject(node.data_dir)
        assert node.proc is not None
        status = node.proc.wait(60)
        assert status == 1, f"node {victim} exited with {status} after {what}"
        assert node.wait_for_log("all log dirs have failed", 1), node.log_text()[-3000:]
        run.down.add(victim)
        run.wait_left_out(victim, what)
        heal()
        run.cluster.start([victim])
        run.down.discard(victim)
        run.wait_healthy(f"node {victim} restarted after {what}")
        run.wait_progress(f"node {victim} restarted after {what}")

    start, end = run.fault(f"{what} on leader {victim}", fault)
    told = run.retries_between(start, end)
    assert told > 0, f"no producer was told of {what}: silence"


@pytest.mark.timeout(300)
def test_acknowledged_records_survive_a_full_disk_and_io_errors_on_leaders(
    run: Run, rules: Path, record_property: Callable[[str, Any], None]
) -> None:
    filler: list[Path] = []

    def fill_disk(data_dir: Path) -> None:
        filler.append(fill(data_dir))

    def rule(op: str) -> Callable[[Path], object]:
        return lambda data_dir: rules.write_text(f"{op} {data_dir}/{TOPIC}-\n")

    _fail_a_leaders_disk(run, 0, "a full disk", fill_disk, lambda: filler.pop().unlink())
    _fail_a_leaders_disk(run, 1, "an fsync error", rule("fsync"), lambda: rules.write_text(""))

    storage_errors = sum(
        any(text in message for text in STORAGE_ERROR_TEXTS)
        for producer in run.producers
        for _, message in producer.retries
    )
    line = f"produce attempts answered KAFKA_STORAGE_ERROR: {storage_errors}"
    print(line)
    record_property("figures", line)
    finish_and_check(run, record_property)
