"""Benchmarks: Samsa beside its peers, measured side by side in one run (never timed tests)."""
