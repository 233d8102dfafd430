"""What one seed decides up front for a whole-cluster simulation.

Times are Kafka's defaults scaled down about ten times (as tests/raft/sim.py does
for the quorum), so one simulated run of a few seconds covers many elections,
fencings, ISR shrinks and expansions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from tests.raft.sim import Scenario


@dataclass(frozen=True)
class ClusterScenario:
    """The cluster shape, the workload and the fault mix of one seed.

    ``raft`` is the quorum simulator's own scenario (network, crash and partition
    mix), with the controllers as voters and the brokers as observers; the rest
    is the cluster above it.
    """

    seed: int
    raft: Scenario
    controllers: int
    brokers: int
    data_partitions: int
    session_timeout_ms: int
    heartbeat_interval_ms: int
    controller_poll_ms: int
    replica_lag_time_max_ms: int
    replica_fetch_max_bytes: int
    replica_fetch_backoff_ms: int
    truncate_on_fetch: bool
    snapshot_bytes: int
    hw_checkpoint_ms: int
    produce_every_ms: int
    consume_every_ms: int
    admin_every_ms: int
    records_per_batch: int
    request_timeout_ms: int
    produce_timeout_ms: int
    unclean_leader_election: bool = False
    transactions: bool = False
    """Transactional producers, a coordinator and a read_committed consumer too."""

    @property
    def fault_ms(self) -> int:
        return self.raft.fault_ms

    @classmethod
    def from_seed(cls, seed: int, *, fault_ms: int = 3000) -> ClusterScenario:
        rng = random.Random(seed * 104_729 + 17)
        controllers = rng.choice((1, 3, 3, 3, 5))
        brokers = rng.choice((3, 3, 4, 5))
        base = Scenario.from_seed(seed, fault_ms=fault_ms)
        raft = replace(
            base,
            voters=controllers,
            observers=brokers,
            # Voter changes and the quorum simulator's own appends and snapshots
            # are off: the controller writes the log, the loader snapshots it.
            voter_change_every_ms=10**9,
            append_every_ms=10**9,
            snapshot_every=10**9,
            delete_prefix=0.0,
            # Brokers fetch the metadata log as observers: small fetches make
            # lagging ones take many round trips, as with a big log.
            fetch_max_entries=rng.choice((5, 20, 100)),
            # Every controller write waits for its commit (writes are serialised), so
            # heavy loss starves the cluster of writes; the quorum simulator alone
            # covers 15% loss.
            loss=rng.choice((0.0, 0.01, 0.03, 0.08)),
            crash_weight=rng.randint(0, 4),
            partition_weight=rng.randint(0, 4),
            pause_weight=rng.randint(0, 3),
            chaos_every_ms=rng.randint(120, 400),
            # Per Raft action: the cluster runs far more actions than the quorum
            # simulator's, so the same rate would crash a node every few ms.
            crash_mid_actions=rng.choice((0.0, 0.0, 0.0005)),
            converge_ms=15_000,
        )
        return cls(
            seed=seed,
            raft=raft,
            controllers=controllers,
            brokers=brokers,
            data_partitions=rng.choice((1, 2, 3)),
            session_timeout_ms=rng.choice((450, 900)),
            heartbeat_interval_ms=rng.choice((100, 200)),
            controller_poll_ms=rng.choice((20, 50)),
            replica_lag_time_max_ms=rng.choice((300, 600, 1000)),
            replica_fetch_max_bytes=rng.choice((300, 1000, 5000)),
            replica_fetch_backoff_ms=rng.choice((20, 100)),
            truncate_on_fetch=rng.random() < 0.8,
            snapshot_bytes=rng.choice((1500, 6000, 10**9)),
            hw_checkpoint_ms=rng.choice((100, 500)),
            produce_every_ms=rng.randint(5, 25),
            consume_every_ms=rng.randint(10, 40),
            admin_every_ms=rng.randint(30, 120),
            records_per_batch=rng.choice((1, 1, 2, 3)),
            request_timeout_ms=500,
            produce_timeout_ms=rng.choice((300, 600)),
            transactions=rng.random() < 0.5,
        )
