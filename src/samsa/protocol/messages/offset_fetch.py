"""OffsetFetch (key 9): read the committed positions of a group.

Two layouts share this API: v1-7 ask about one group with top-level fields, v8+
ask about many groups at once in ``groups`` (KIP-709).  A null ``topics`` (v2+)
means "every partition the group has committed".  v9 carries a KIP-848
member's id and epoch; v10 names topics by ``topic_id`` instead of ``name``
(an unknown id answered UNKNOWN_TOPIC_ID).
"""

from samsa.protocol.schema import F, api

API = api(
    9,
    "OffsetFetch",
    valid="1-10",
    flexible="6+",
    request=[
        F("group_id", "string", "0-7"),
        F(
            "topics",
            "[]struct",
            "0-7",
            nullable="2-7",
            fields=[
                F("name", "string", "0-7"),
                F("partition_indexes", "[]int32", "0-7"),
            ],
        ),
        F(
            "groups",
            "[]struct",
            "8+",
            fields=[
                F("group_id", "string", "8+"),
                F("member_id", "string", "9+", nullable="9+", default=None),
                F("member_epoch", "int32", "9+", default=-1),
                F(
                    "topics",
                    "[]struct",
                    "8+",
                    nullable="8+",
                    fields=[
                        F("name", "string", "8-9"),
                        F("topic_id", "uuid", "10+"),
                        F("partition_indexes", "[]int32", "8+"),
                    ],
                ),
            ],
        ),
        F("require_stable", "bool", "7+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32", "3+"),
        F(
            "topics",
            "[]struct",
            "0-7",
            fields=[
                F("name", "string", "0-7"),
                F(
                    "partitions",
                    "[]struct",
                    "0-7",
                    fields=[
                        F("partition_index", "int32", "0-7"),
                        F("committed_offset", "int64", "0-7"),
                        F("committed_leader_epoch", "int32", "5-7", default=-1),
                        F("metadata", "string", "0-7", nullable="0-7"),
                        F("error_code", "int16", "0-7"),
                    ],
                ),
            ],
        ),
        F("error_code", "int16", "2-7", default=0),
        F(
            "groups",
            "[]struct",
            "8+",
            fields=[
                F("group_id", "string", "8+"),
                F(
                    "topics",
                    "[]struct",
                    "8+",
                    fields=[
                        F("name", "string", "8-9"),
                        F("topic_id", "uuid", "10+"),
                        F(
                            "partitions",
                            "[]struct",
                            "8+",
                            fields=[
                                F("partition_index", "int32", "8+"),
                                F("committed_offset", "int64", "8+"),
                                F("committed_leader_epoch", "int32", "8+", default=-1),
                                F("metadata", "string", "8+", nullable="8+"),
                                F("error_code", "int16", "8+"),
                            ],
                        ),
                    ],
                ),
                F("error_code", "int16", "8+", default=0),
            ],
        ),
    ],
)
