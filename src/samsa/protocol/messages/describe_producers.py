"""DescribeProducers (key 61): active idempotent/transactional producers per partition.

Transcribed from Kafka's DescribeProducersRequest/DescribeProducersResponse.json;
admin tooling for stuck transactions.
"""

from samsa.protocol.schema import F, api

API = api(
    61,
    "DescribeProducers",
    valid="0",
    flexible="0+",
    request=[
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string"),
                F("partition_indexes", "[]int32"),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                        F("error_message", "string", nullable="0+", default=None),
                        F(
                            "active_producers",
                            "[]struct",
                            fields=[
                                F("producer_id", "int64"),
                                F("producer_epoch", "int32"),
                                F("last_sequence", "int32", default=-1),
                                F("last_timestamp", "int64", default=-1),
                                F("coordinator_epoch", "int32"),
                                F("current_txn_start_offset", "int64", default=-1),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)
