"""OffsetCommit (key 8): a group member stores its consumed positions.

v2-4 carry a group-wide retention time (gone from v5, when the broker took over
expiry); v6 adds the leader epoch of the committed offset so a consumer can
detect log truncation after resuming; v7 adds static membership; v9 is
KIP-848's (member epochs); v10 names topics by ``topic_id`` instead of
``name``, an unknown id answered UNKNOWN_TOPIC_ID.
"""

from samsa.protocol.schema import F, api

API = api(
    8,
    "OffsetCommit",
    valid="2-10",
    flexible="8+",
    request=[
        F("group_id", "string"),
        F("generation_id_or_member_epoch", "int32", "1+", default=-1),
        F("member_id", "string", "1+"),
        F("group_instance_id", "string", "7+", nullable="7+", default=None),
        F("retention_time_ms", "int64", "2-4", default=-1),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string", "0-9"),
                F("topic_id", "uuid", "10+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("committed_offset", "int64"),
                        F("committed_leader_epoch", "int32", "6+", default=-1),
                        F("commit_timestamp", "int64", "1", default=-1),
                        F("committed_metadata", "string", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32", "3+"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string", "0-9"),
                F("topic_id", "uuid", "10+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                    ],
                ),
            ],
        ),
    ],
)
