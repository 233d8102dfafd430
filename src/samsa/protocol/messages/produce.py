"""Produce (key 0): append record batches to partitions.

Transcribed from Kafka's ProduceRequest/ProduceResponse.json.  Versions 0-2 are
decodable and advertised even though the broker answers them with
UNSUPPORTED_VERSION: librdkafka <= 2.11.0 only compresses when the advertised
Produce range starts at 0 (Kafka 4.x does the same, KAFKA-18659).  ``records``
stays raw bytes so the broker can validate and append batches without decoding
individual records.

v12 is a transaction version 2 producer, whose first write to a partition
adds it to the transaction (KIP-890 part 2); it is advertised together with
the ``transaction.version`` feature.  v10's response fields (KIP-951's leader
hints) are tagged and left out, as a client may do without them.
"""

from samsa.protocol.schema import F, api

API = api(
    0,
    "Produce",
    valid="0-12",
    flexible="9+",
    request=[
        F("transactional_id", "string", "3+", nullable="3+", default=None),
        F("acks", "int16"),
        F("timeout_ms", "int32"),
        F(
            "topic_data",
            "[]struct",
            fields=[
                F("name", "string"),
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
                F("name", "string"),
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
                    ],
                ),
            ],
        ),
        F("throttle_time_ms", "int32", "1+", default=0),
    ],
)
