"""AddPartitionsToTxn (key 24): a transactional producer registers partitions it writes to.

Kafka's v4+ batches many transactions (sent broker-to-coordinator, KIP-890); the
client versions v0-3 kept their fields under ``v3_and_below_*`` names, which we
keep so field names stay Kafka's.
"""

from samsa.protocol.schema import F, api

API = api(
    24,
    "AddPartitionsToTxn",
    valid="0-3",
    flexible="3+",
    request=[
        F("v3_and_below_transactional_id", "string", "0-3"),
        F("v3_and_below_producer_id", "int64", "0-3"),
        F("v3_and_below_producer_epoch", "int16", "0-3"),
        F(
            "v3_and_below_topics",
            "[]struct",
            "0-3",
            fields=[
                F("name", "string"),
                F("partitions", "[]int32"),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "results_by_topic_v3_and_below",
            "[]struct",
            "0-3",
            fields=[
                F("name", "string"),
                F(
                    "results_by_partition",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("partition_error_code", "int16"),
                    ],
                ),
            ],
        ),
    ],
)
