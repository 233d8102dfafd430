"""Record batches in Kafka's v2 format: building, reading, columns, compression."""
