"""AlterPartitionReassignments (key 45): start or cancel moving partitions' replicas.

Transcribed from Kafka's AlterPartitionReassignmentsRequest/Response.json,
versions 0-1, flexible from v0.  Null ``replicas`` cancels a pending
reassignment.  v1 (Kafka 4.1) adds ``allow_replication_factor_change``
(default true, v0's behaviour); the response echoes it.
"""

from samsa.protocol.schema import F, api

API = api(
    45,
    "AlterPartitionReassignments",
    listeners=("broker", "controller"),
    valid="0-1",
    flexible="0+",
    request=[
        F("timeout_ms", "int32", default=60000),
        F("allow_replication_factor_change", "bool", "1+", default=True),
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
                        F("replicas", "[]int32", nullable="0+", default=None),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("allow_replication_factor_change", "bool", "1+", default=True),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
        F(
            "responses",
            "[]struct",
            fields=[
                F("name", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                        F("error_message", "string", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)
