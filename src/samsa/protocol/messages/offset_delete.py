"""OffsetDelete (key 47): drop committed offsets of partitions a group no longer consumes."""

from samsa.protocol.schema import F, api

API = api(
    47,
    "OffsetDelete",
    valid="0",
    flexible="none",
    request=[
        F("group_id", "string"),
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
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("error_code", "int16"),
        F("throttle_time_ms", "int32"),
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
                    ],
                ),
            ],
        ),
    ],
)
