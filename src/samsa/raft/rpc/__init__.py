"""Raft's RPCs in motion: outgoing requests, how each side handles them, their Kafka wire bodies.

The messages themselves (frozen dataclasses) are ``samsa.raft.messages``, beside
the records they carry: the roles hold them too, and import nothing from here.
"""
