"""ListOffsets (key 2): find the offset for a timestamp (-1 latest, -2 earliest).

Transcribed from Kafka's ListOffsetsRequest/ListOffsetsResponse.json, versions 1-11
(v0's multi-offset form was removed in Kafka 4.0).  v8 allows timestamp -4 (the
earliest offset on local disk, KIP-405), v9 -5 (the last offset moved to tiered
storage, KIP-1005), v10 adds the time a broker may spend on a remote lookup
(KIP-1075), v11 allows -6 (the earliest offset not yet uploaded to tiered
storage, KIP-1023); the bodies of v7-v11 otherwise agree.  Kafka 4.1's tools and Admin
client send v8+ for those timestamps and fail against a broker stopping at v7.
"""

from samsa.protocol.schema import F, api

API = api(
    2,
    "ListOffsets",
    valid="1-11",
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
        F("timeout_ms", "int32", "10+"),
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
