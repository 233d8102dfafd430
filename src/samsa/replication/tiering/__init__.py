"""Tiered storage on this broker's partitions: the remote log manager and its seams to the log."""
