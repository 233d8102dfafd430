"""Tiered storage while leaders fail in the middle of a copy: nothing acknowledged is lost, no reader sees a gap (issue 34, must-show 2).

The three-node cluster of ``fault_cluster`` keeps producing and copying; the
store is slowed to a second a request until the leader of a partition is
seen uploading a segment (its log says ``copying`` and not yet ``copied``),
then:

1. that leader is SIGKILLed: the new leader copies what is missing, and the
   dead leader's copy cut short (COPY_SEGMENT_STARTED without a finish) and
   its objects are cleaned once the orphan grace passed;
2. leadership moves away from that leader (a reassignment puts another
   replica first, then a preferred election), the old leader staying up: it
   stops copying, the new one continues from the remote metadata.

Each fault ends with ``fault_checks.check_now``: lost 0, duplicates 0,
gaps 0, and the remote metadata consistent with the objects in the bucket.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.cluster.fault_run import TOPIC
from tests.cluster.helpers import admin
from tests.tiered.fault_checks import end_marks, segment_histories, wait_copied_up_to
from tests.tiered.fault_cluster import Faults, leader, open_faults, wait_upload

from samsa.client import TopicPartition
from samsa.client.admin.families.elections import ElectionType
from samsa.testing.cluster import wait_until
from samsa.testing.object_store import S3Server

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server) -> Iterator[Faults]:
    with open_faults(tmp_path_factory.mktemp("tiered-leader-faults"), s3_server) as made:
        yield made


def test_a_leader_killed_in_the_middle_of_an_upload(faults: Faults) -> None:
    run = faults.run
    victim, base = wait_upload(faults, 0)
    run.cluster.nodes[victim].kill()
    run.down.add(victim)
    faults.proxy.pass_through()
    run.wait_left_out(victim, "killed")
    run.wait_progress(f"node {victim} killed in an upload of segment {base}")
    run.cluster.start([victim], timeout=120)
    run.down.discard(victim)
    run.wait_healthy(f"node {victim} restarted")
    run.wait_progress(f"node {victim} restarted")
    wait_copied_up_to(run, end_marks(run), "the new leaders copying")
    figures = faults.check(f"leader {victim} SIGKILLed uploading {TOPIC}-0's segment {base}")
    assert figures.remote_segments > 0
    # The copy the kill cut short never finished, and was deleted since.
    cut_short = [
        h
        for h in segment_histories(run.bootstrap, 0).values()
        if h[0] == f"STARTED by {victim} at {base}"
    ]
    assert cut_short, f"no copy of segment {base} by node {victim} in the metadata"
    assert all("COPY_SEGMENT_FINISHED" not in h for h in cut_short), cut_short
    assert all(h[-1] == "DELETE_SEGMENT_FINISHED" for h in cut_short), cut_short


def test_leadership_moved_in_the_middle_of_an_upload(faults: Faults) -> None:
    run = faults.run
    old, base = wait_upload(faults, 1)
    view = run.agreed_view()
    assert view is not None
    replicas = list(view[1].replicas)
    new = next(r for r in replicas if r != old)
    order = [new, *[r for r in replicas if r != new]]
    tp = TopicPartition(TOPIC, 1)
    with admin(run.bootstrap) as client:
        assert client.alter_partition_reassignments({tp: order}, timeout=15) == {tp: None}
        wait_until(
            lambda: not client.list_partition_reassignments([tp], timeout=5),
            30,
            f"{TOPIC}-1's replicas reordered to {order}",
        )

        def elected() -> bool:
            if leader(run, 1) == new:
                return True
            client.elect_leaders(ElectionType.PREFERRED, [tp], timeout=10)
            return leader(run, 1) == new

        wait_until(elected, 30, f"node {new} elected leader of {TOPIC}-1")
    faults.proxy.pass_through()
    run.wait_progress(f"leadership of {TOPIC}-1 moved from {old} to {new}")
    run.wait_healthy("leadership moved")
    wait_copied_up_to(run, end_marks(run), "the new leader copying")
    faults.check(f"leadership of {TOPIC}-1 moved from {old} to {new} uploading segment {base}")


def test_everything_acknowledged_is_read_back_at_the_end(faults: Faults) -> None:
    wait_copied_up_to(faults.run, end_marks(faults.run), "the end")
    faults.finish()
