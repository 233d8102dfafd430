"""The log cleaner: compaction passes over compacted logs, their offset map, record filtering and the crash-safe swap."""
