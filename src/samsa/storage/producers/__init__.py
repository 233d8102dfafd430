"""What a partition remembers of its producers: idempotence checks, transactions, snapshots and their recovery."""
