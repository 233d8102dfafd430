"""ListOffsets (key 2): find the offset for a timestamp (-1 latest, -2 earliest).

Transcribed from Kafka's ListOffsetsRequest/ListOffsetsResponse.json, versions 1-7
(v0's multi-offset form was removed in Kafka 4.0).
"""

from samsa.protocol.schema import F, api

API = api(
    2,
    "ListOffsets",
    valid="1-7",
    flexible="6+",
    request=[
        F("replica_id", "int32"),
        F("isolation_level", "int8", "2+"),
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
                        F("current_leader_epoch", "int32", "4+", default=-1),
                        F("timestamp", "int64"),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32", "2+"),
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
                        F("timestamp", "int64", "1+", default=-1),
                        F("offset", "int64", "1+", default=-1),
                        F("leader_epoch", "int32", "4+", default=-1),
                    ],
                ),
            ],
        ),
    ],
)
