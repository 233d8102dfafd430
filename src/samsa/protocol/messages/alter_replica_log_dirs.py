"""AlterReplicaLogDirs (key 34): move a broker's replicas between its log dirs (JBOD).

Sent to the broker that holds the replicas (``kafka-reassign-partitions`` with
``log_dirs`` in its plan).  Kafka 4.0 removed v0; v2 is flexible.
"""

from samsa.protocol.schema import F, api

API = api(
    34,
    "AlterReplicaLogDirs",
    valid="1-2",
    flexible="2+",
    request=[
        F(
            "dirs",
            "[]struct",
            fields=[
                F("path", "string"),
                F(
                    "topics",
                    "[]struct",
                    fields=[F("name", "string"), F("partitions", "[]int32")],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "results",
            "[]struct",
            fields=[
                F("topic_name", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[F("partition_index", "int32"), F("error_code", "int16")],
                ),
            ],
        ),
    ],
)
