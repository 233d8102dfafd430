"""ListPartitionReassignments (key 46): the reassignments in progress.

Transcribed from Kafka's ListPartitionReassignmentsRequest/Response.json,
version 0, flexible from v0.  Null ``topics`` in the request lists every
reassignment.
"""

from samsa.protocol.schema import F, api

API = api(
    46,
    "ListPartitionReassignments",
    listeners=("broker", "controller"),
    valid="0",
    flexible="0+",
    request=[
        F("timeout_ms", "int32", default=60000),
        F(
            "topics",
            "[]struct",
            nullable="0+",
            default=None,
            fields=[F("name", "string"), F("partition_indexes", "[]int32")],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
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
                        F("replicas", "[]int32"),
                        F("adding_replicas", "[]int32"),
                        F("removing_replicas", "[]int32"),
                    ],
                ),
            ],
        ),
    ],
)
