"""Small files kept crash-safe (checkpoints, KRaft snapshot files, atomic replacement), fsync timing and injected I/O faults."""
