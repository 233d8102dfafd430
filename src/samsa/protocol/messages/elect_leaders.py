"""ElectLeaders (key 43): trigger preferred or unclean leader election.

Transcribed from Kafka's ElectLeadersRequest/ElectLeadersResponse.json.  Null
``topic_partitions`` means "all partitions".  ``election_type``: 0 preferred,
1 unclean.
"""

from samsa.protocol.schema import F, api

API = api(
    43,
    "ElectLeaders",
    listeners=("broker", "controller"),
    valid="0-2",
    flexible="2+",
    request=[
        F("election_type", "int8", "1+"),
        F(
            "topic_partitions",
            "[]struct",
            nullable="0+",
            fields=[
                F("topic", "string"),
                F("partitions", "[]int32"),
            ],
        ),
        F("timeout_ms", "int32", default=60000),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16", "1+"),
        F(
            "replica_election_results",
            "[]struct",
            fields=[
                F("topic", "string"),
                F(
                    "partition_result",
                    "[]struct",
                    fields=[
                        F("partition_id", "int32"),
                        F("error_code", "int16"),
                        F("error_message", "string", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)
