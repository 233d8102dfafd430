"""A tiering leader cut off by the network: nothing acknowledged is lost, no reader sees a gap (issue 34, must-show 2).

Three combined nodes, each in its own network namespace (``network.HostNetwork``),
tier the topic of ``tests.tiered.fault_cluster`` to a bucket of the session's
S3Proxy, which they reach through ``S3FaultProxy`` on the bridge's root
address; producers, reader and checker run in the root namespace.

The leader of a partition is cut from both other nodes, but not from the
clients nor from the store: a leader that may still believe it leads, still
reaches the bucket, and must neither acknowledge what it cannot replicate
nor leave a remote segment the metadata disowns.  The others elect a new
leader, which continues copying from the remote metadata; then the network
heals.  ``fault_checks.check_now`` proves lost 0, duplicates 0, gaps 0 and
the remote metadata consistent with the objects in the bucket, once after
the fault and once more with the producers stopped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cluster.fault_run import PARTITIONS, TOPIC
from tests.netfaults.network import HostNetwork
from tests.tiered.fault_checks import end_marks, tiered_end, wait_copied_up_to
from tests.tiered.fault_cluster import NODES, leader, open_faults

from samsa.testing.cluster import wait_until
from samsa.testing.object_store import S3Server
from samsa.testing.object_store import s3_server as s3_server

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]


def test_a_tiering_leader_cut_off_from_the_other_nodes(
    tmp_path: Path, host_network: HostNetwork, s3_server: S3Server
) -> None:
    net = host_network
    with open_faults(
        tmp_path,
        s3_server,
        proxy_host=net.root_address,
        hosts={n: net.address(n) for n in NODES},
        command_prefix=net.command_prefix,
    ) as faults:
        run = faults.run
        wait_copied_up_to(run, dict.fromkeys(range(PARTITIONS), 200), "history before the cut")
        victim = leader(run, 0)
        led = [p for p in range(PARTITIONS) if leader(run, p) == victim]
        others = [n for n in NODES if n != victim]
        net.isolate(victim, others)
        run.down.add(victim)  # its own view is stale while it is cut off: not asked
        try:
            run.wait_left_out(victim, "cut off")
            run.wait_progress(f"node {victim} cut off")
            # The new leaders copy on from the remote metadata meanwhile.
            marks = {p: tiered_end(run, p) for p in led}
            wait_until(
                lambda: all(tiered_end(run, p) > mark for p, mark in marks.items()),
                60,
                f"the new leaders of {TOPIC}-{led} copying while node {victim} is cut off",
            )
        finally:
            net.heal()
            run.down.discard(victim)
        run.wait_healthy(f"node {victim} reconnected")
        run.wait_progress(f"node {victim} reconnected")
        wait_copied_up_to(run, end_marks(run), "after the network healed")
        faults.check(f"leader {victim} of {TOPIC}-{led} cut off from the other nodes")
        wait_copied_up_to(run, end_marks(run), "the end")
        faults.finish()
