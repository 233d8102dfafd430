"""Records of Kafka's internal topics and logs: groups, consumer groups, transactions, share state, KRaft control."""
