"""Replicated partitions: acks=all throughput, leader failover, controlled shutdown, idle fetching."""
