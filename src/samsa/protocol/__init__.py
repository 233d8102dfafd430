"""Kafka's wire protocol, sans-I/O: API schemas, record batches, codecs, internal record schemas."""
