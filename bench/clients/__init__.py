"""Samsa's producer and consumer against kafka-python and confluent-kafka on the same broker."""
