"""Cluster metadata: records, the image they build, and the log that keeps them.

State changes only by replaying records, as in Kafka's KRaft controller: the
single-node broker writes records to its local metadata log (a quorum of one);
the cluster work replicates the very same log with Raft.
"""
