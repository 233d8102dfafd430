"""Schema registry: formats, compatibility rules, store, API (Confluent Schema Registry's)."""
