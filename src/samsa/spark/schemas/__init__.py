"""Typed columns: keys and values decoded and encoded with the schema registry (Avro, Confluent's wire format)."""
