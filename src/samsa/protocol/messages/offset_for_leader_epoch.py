"""OffsetForLeaderEpoch (key 23): end offset of a leader epoch, for log truncation.

Transcribed from Kafka's OffsetForLeaderEpochRequest/Response.json, versions 2-4
(Kafka 4.0's minimum; librdkafka uses exactly v2).  ``replica_id`` -2 marks a
consumer rather than a follower.
"""

from samsa.protocol.schema import F, api

API = api(
    23,
    "OffsetForLeaderEpoch",
    valid="2-4",
    flexible="4+",
    request=[
        F("replica_id", "int32", "3+", default=-2),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition", "int32"),
                        F("current_leader_epoch", "int32", "2+", default=-1),
                        F("leader_epoch", "int32"),
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
                F("topic", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("error_code", "int16"),
                        F("partition", "int32"),
                        F("leader_epoch", "int32", "1+", default=-1),
                        F("end_offset", "int64", default=-1),
                    ],
                ),
            ],
        ),
    ],
)
