"""Describe/Alter/DeleteShareGroupOffsets (keys 90-92): a share group's start offsets.

Sent to the group coordinator (``kafka-share-groups.sh --describe`` and
``--reset-offsets``/``--delete-offsets``); all v0 in Kafka 4.1.  Altering or
deleting is refused while the group has members (NON_EMPTY_GROUP).
DescribeShareGroupOffsets v1 (KIP-1226) adds each partition's ``lag``.
"""

from samsa.protocol.schema import F, api

APIS = [
    api(
        90,
        "DescribeShareGroupOffsets",
        valid="0-1",
        flexible="0+",
        request=[
            F(
                "groups",
                "[]struct",
                fields=[
                    F("group_id", "string"),
                    F(
                        "topics",
                        "[]struct",
                        nullable="0+",
                        fields=[F("topic_name", "string"), F("partitions", "[]int32")],
                    ),
                ],
            )
        ],
        response=[
            F("throttle_time_ms", "int32"),
            F(
                "groups",
                "[]struct",
                fields=[
                    F("group_id", "string"),
                    F(
                        "topics",
                        "[]struct",
                        fields=[
                            F("topic_name", "string"),
                            F("topic_id", "uuid"),
                            F(
                                "partitions",
                                "[]struct",
                                fields=[
                                    F("partition_index", "int32"),
                                    F("start_offset", "int64"),
                                    F("leader_epoch", "int32"),
                                    F("lag", "int64", "1+", default=-1),
                                    F("error_code", "int16"),
                                    F("error_message", "string", nullable="0+", default=None),
                                ],
                            ),
                        ],
                    ),
                    F("error_code", "int16"),
                    F("error_message", "string", nullable="0+", default=None),
                ],
            ),
        ],
    ),
    api(
        91,
        "AlterShareGroupOffsets",
        valid="0",
        flexible="0+",
        request=[
            F("group_id", "string"),
            F(
                "topics",
                "[]struct",
                fields=[
                    F("topic_name", "string"),
                    F(
                        "partitions",
                        "[]struct",
                        fields=[F("partition_index", "int32"), F("start_offset", "int64")],
                    ),
                ],
            ),
        ],
        response=[
            F("throttle_time_ms", "int32"),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
            F(
                "responses",
                "[]struct",
                fields=[
                    F("topic_name", "string"),
                    F("topic_id", "uuid"),
                    F(
                        "partitions",
                        "[]struct",
                        fields=[
                            F("partition_index", "int32"),
                            F("error_code", "int16"),
                            F("error_message", "string", nullable="0+", default=None),
                        ],
                    ),
                ],
            ),
        ],
    ),
    api(
        92,
        "DeleteShareGroupOffsets",
        valid="0",
        flexible="0+",
        request=[
            F("group_id", "string"),
            F("topics", "[]struct", fields=[F("topic_name", "string")]),
        ],
        response=[
            F("throttle_time_ms", "int32"),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
            F(
                "responses",
                "[]struct",
                fields=[
                    F("topic_name", "string"),
                    F("topic_id", "uuid"),
                    F("error_code", "int16"),
                    F("error_message", "string", nullable="0+", default=None),
                ],
            ),
        ],
    ),
]
