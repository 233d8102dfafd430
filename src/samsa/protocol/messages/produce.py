"""Produce (key 0): append record batches to partitions.

Transcribed from Kafka's ProduceRequest/ProduceResponse.json.  Versions 0-2 are
decodable and advertised even though the broker answers them with
UNSUPPORTED_VERSION: librdkafka <= 2.11.0 only compresses when the advertised
Produce range starts at 0 (Kafka 4.x does the same, KAFKA-18659).  ``records``
stays raw bytes so the broker can validate and append batches without decoding
individual records.

v12 is a transaction version 2 producer, whose first write to a partition
adds it to the transaction (KIP-890 part 2); it is advertised together with
the ``transaction.version`` feature.  v10 adds KIP-951's leader hints, tagged:
a partition's ``current_leader`` and the ``node_endpoints`` of those leaders.
v13 names topics by ``topic_id`` instead of ``name`` (KIP-516), so an unknown
id is answered UNKNOWN_TOPIC_ID.
"""

from samsa.protocol.schema import F, api

API = api(
    0,
    "Produce",
    valid="0-13",
    flexible="9+",
    request=[
        F("transactional_id", "string", "3+", nullable="3+", default=None),
        F("acks", "int16"),
        F("timeout_ms", "int32"),
        F(
            "topic_data",
            "[]struct",
            fields=[
                F("name", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partition_data",
                    "[]struct",
                    fields=[
                        F("index", "int32"),
                        F("records", "records", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F(
            "responses",
            "[]struct",
            fields=[
                F("name", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partition_responses",
                    "[]struct",
                    fields=[
                        F("index", "int32"),
                        F("error_code", "int16"),
                        F("base_offset", "int64"),
                        F("log_append_time_ms", "int64", "2+", default=-1),
                        F("log_start_offset", "int64", "5+", default=-1),
                        F(
                            "record_errors",
                            "[]struct",
                            "8+",
                            fields=[
                                F("batch_index", "int32", "8+"),
                                F(
                                    "batch_index_error_message",
                                    "string",
                                    "8+",
                                    nullable="8+",
                                    default=None,
                                ),
                            ],
                        ),
                        F("error_message", "string", "8+", nullable="8+", default=None),
                        F(
                            "current_leader",
                            "struct",
                            "10+",
                            tag=0,
                            tagged="10+",
                            fields=[
                                F("leader_id", "int32", "10+", default=-1),
                                F("leader_epoch", "int32", "10+", default=-1),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        F("throttle_time_ms", "int32", "1+", default=0),
        F(
            "node_endpoints",
            "[]struct",
            "10+",
            tag=0,
            tagged="10+",
            fields=[
                F("node_id", "int32", "10+"),
                F("host", "string", "10+"),
                F("port", "int32", "10+"),
                F("rack", "string", "10+", nullable="10+", default=None),
            ],
        ),
    ],
)
