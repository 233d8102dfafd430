"""DescribeLogDirs (key 35): size and lag of partitions per log directory.

Transcribed from Kafka's DescribeLogDirsRequest/DescribeLogDirsResponse.json,
versions 1-5 (Kafka 4.0 dropped v0).  Null ``topics`` means "all partitions".
v4 adds each dir's volume sizes; v5 whether the dir is cordoned (KIP-1066: no
new replicas are placed on it).
"""

from samsa.protocol.schema import F, api

API = api(
    35,
    "DescribeLogDirs",
    valid="1-5",
    flexible="2+",
    request=[
        F(
            "topics",
            "[]struct",
            nullable="0+",
            fields=[
                F("topic", "string"),
                F("partitions", "[]int32"),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16", "3+"),
        F(
            "results",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("log_dir", "string"),
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
                                F("partition_size", "int64"),
                                F("offset_lag", "int64"),
                                F("is_future_key", "bool"),
                            ],
                        ),
                    ],
                ),
                F("total_bytes", "int64", "4+", default=-1),
                F("usable_bytes", "int64", "4+", default=-1),
                F("is_cordoned", "bool", "5+", default=False),
            ],
        ),
    ],
)
