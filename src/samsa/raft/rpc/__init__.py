"""Raft's RPCs: messages, outgoing requests, how each side handles them, and their Kafka wire bodies."""
