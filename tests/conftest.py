pytest_plugins = ["samsa.testing", "samsa.testing_kafka_reference", "samsa.testing_kafka"]
