"""Kafka's KRaft metadata record schemas, one module per record family.

The codec and the public API live in ``samsa.protocol.metadata_records``; these
modules only describe the records, transcribed from Kafka's
``metadata/src/main/resources/common/metadata/*.json``.
"""
