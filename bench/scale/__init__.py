"""Many partitions per broker: 10,000 on three brokers, start-up of one broker with many."""
