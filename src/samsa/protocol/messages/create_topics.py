"""CreateTopics (key 19): create topics with a partition count or explicit assignment.

Transcribed from Kafka's CreateTopicsRequest/CreateTopicsResponse.json, versions
2-7 (Kafka 4.0 dropped 0-1).  From v5 the response echoes the topic's configs so
clients need no follow-up DescribeConfigs.
"""

from samsa.protocol.schema import F, api

API = api(
    19,
    "CreateTopics",
    listeners=("broker", "controller"),
    valid="2-7",
    flexible="5+",
    request=[
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string"),
                F("num_partitions", "int32"),
                F("replication_factor", "int16"),
                F(
                    "assignments",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("broker_ids", "[]int32"),
                    ],
                ),
                F(
                    "configs",
                    "[]struct",
                    fields=[
                        F("name", "string"),
                        F("value", "string", nullable="0+"),
                    ],
                ),
            ],
        ),
        F("timeout_ms", "int32", default=60000),
        F("validate_only", "bool", "1+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32", "2+"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string"),
                F("topic_id", "uuid", "7+"),
                F("error_code", "int16"),
                F("error_message", "string", "1+", nullable="0+"),
                F("topic_config_error_code", "int16", "5+", tag=0, tagged="5+"),
                F("num_partitions", "int32", "5+", default=-1),
                F("replication_factor", "int16", "5+", default=-1),
                F(
                    "configs",
                    "[]struct",
                    "5+",
                    nullable="5+",
                    fields=[
                        F("name", "string", "5+"),
                        F("value", "string", "5+", nullable="5+"),
                        F("read_only", "bool", "5+"),
                        F("config_source", "int8", "5+", default=-1),
                        F("is_sensitive", "bool", "5+"),
                    ],
                ),
            ],
        ),
    ],
)
