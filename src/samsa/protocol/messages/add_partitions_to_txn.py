"""AddPartitionsToTxn (key 24): a transactional producer registers partitions it writes to.

Kafka's v4+ batches many transactions and is sent broker-to-coordinator (KIP-890:
a partition leader verifies, ``verify_only``, that a transactional produce's
partition is in the transaction); the client versions v0-3 kept their fields
under ``v3_and_below_*`` names, which we keep so field names stay Kafka's.
"""

from samsa.protocol.schema import F, api

_TOPICS = [F("name", "string"), F("partitions", "[]int32")]
_TOPIC_RESULTS = [
    F("name", "string"),
    F(
        "results_by_partition",
        "[]struct",
        fields=[F("partition_index", "int32"), F("partition_error_code", "int16")],
    ),
]

API = api(
    24,
    "AddPartitionsToTxn",
    valid="0-5",
    flexible="3+",
    request=[
        F(
            "transactions",
            "[]struct",
            "4+",
            fields=[
                F("transactional_id", "string"),
                F("producer_id", "int64"),
                F("producer_epoch", "int16"),
                F("verify_only", "bool", default=False),
                F("topics", "[]struct", fields=_TOPICS),
            ],
        ),
        F("v3_and_below_transactional_id", "string", "0-3"),
        F("v3_and_below_producer_id", "int64", "0-3"),
        F("v3_and_below_producer_epoch", "int16", "0-3"),
        F("v3_and_below_topics", "[]struct", "0-3", fields=_TOPICS),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16", "4+"),
        F(
            "results_by_transaction",
            "[]struct",
            "4+",
            fields=[
                F("transactional_id", "string"),
                F("topic_results", "[]struct", fields=_TOPIC_RESULTS),
            ],
        ),
        F("results_by_topic_v3_and_below", "[]struct", "0-3", fields=_TOPIC_RESULTS),
    ],
)
