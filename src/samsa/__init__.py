"""Samsa: a Kafka-compatible streaming platform in Python, one package per subsystem."""
