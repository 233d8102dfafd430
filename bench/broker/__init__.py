"""One broker against its peers (tansu, Apache Kafka), loaded by Python, librdkafka and Kafka's own tools."""
