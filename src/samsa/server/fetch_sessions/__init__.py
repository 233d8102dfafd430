"""Incremental fetch sessions (KIP-227), the broker's side."""
