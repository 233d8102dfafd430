"""The Raft metadata quorum and the controller: CreateTopics latency, failover, snapshots, scale."""
