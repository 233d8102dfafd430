"""Per-topic log configuration under Kafka's names: the key table, value types and LogConfig."""
