"""Broker keys of replication and the controller quorum: the ISR and replica
fetchers, leader election and balance, Raft timeouts, metadata snapshots and
broker heartbeats."""

from __future__ import annotations

from samsa.config.values import ConfigKey, parse_bool

REPLICATION_KEYS: list[ConfigKey] = [
    ConfigKey("min.insync.replicas", int, 1, "Replicas that must acknowledge acks=all."),
    ConfigKey("replica.lag.time.max.ms", int, 30000, "A follower this far behind leaves the ISR."),
    ConfigKey("replica.fetch.max.bytes", int, 1048576, "Bytes per partition per replica fetch."),
    ConfigKey(
        "replica.fetch.response.max.bytes", int, 10485760, "Bytes per replica fetch response."
    ),
    ConfigKey("replica.fetch.wait.max.ms", int, 500, "Longest wait of a replica fetch."),
    ConfigKey("replica.fetch.min.bytes", int, 1, "Bytes a replica fetch waits for."),
    ConfigKey("replica.fetch.backoff.ms", int, 1000, "Wait after a failed replica fetch."),
    ConfigKey("num.replica.fetchers", int, 1, "Fetcher tasks per source broker."),
    # Leaders.
    ConfigKey(
        "unclean.leader.election.enable",
        parse_bool,
        False,
        "Let an out-of-sync replica lead (data loss) when no in-sync one is alive.",
    ),
    ConfigKey("auto.leader.rebalance.enable", parse_bool, True, "Move leaders back to preferred."),
    ConfigKey(
        "leader.imbalance.per.broker.percentage", int, 10, "Imbalance that triggers rebalancing."
    ),
    ConfigKey(
        "leader.imbalance.check.interval.seconds", int, 300, "How often imbalance is checked."
    ),
    ConfigKey(
        "controlled.shutdown.enable", parse_bool, True, "Move leaderships away before exiting."
    ),
    # The controller quorum and the metadata log.
    ConfigKey(
        "controller.quorum.voters",
        str,
        "",
        "Static Raft voters (ID@HOST:PORT,...); empty with no bootstrap servers = single node.",
    ),
    ConfigKey(
        "controller.quorum.bootstrap.servers",
        str,
        "",
        "Where to find the quorum when its voters live in the metadata log (HOST:PORT,...).",
    ),
    ConfigKey("controller.quorum.election.timeout.ms", int, 1000, "Raft election timeout."),
    ConfigKey("controller.quorum.fetch.timeout.ms", int, 2000, "Raft follower's leader timeout."),
    ConfigKey("controller.quorum.election.backoff.max.ms", int, 1000, "Raft election backoff cap."),
    ConfigKey("controller.quorum.request.timeout.ms", int, 2000, "Raft request timeout."),
    ConfigKey("controller.quorum.retry.backoff.ms", int, 20, "Raft retry backoff."),
    ConfigKey("controller.quorum.append.linger.ms", int, 25, "Raft leader's batching of appends."),
    ConfigKey(
        "metadata.log.max.record.bytes.between.snapshots",
        int,
        20971520,
        "Metadata bytes appended before the next snapshot.",
    ),
    ConfigKey("metadata.log.segment.bytes", int, 1073741824, "Segment size of the metadata log."),
    ConfigKey(
        "metadata.log.max.snapshot.interval.ms",
        int,
        3600000,
        "Longest time between metadata snapshots (0: only by size).",
    ),
    ConfigKey("broker.heartbeat.interval.ms", int, 2000, "Broker heartbeat interval."),
    ConfigKey("broker.session.timeout.ms", int, 9000, "A broker silent this long is fenced."),
]
