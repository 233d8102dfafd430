"""CreatePartitions (key 37): grow the partition count of existing topics.

Transcribed from Kafka's CreatePartitionsRequest/CreatePartitionsResponse.json.
"""

from samsa.protocol.schema import F, api

API = api(
    37,
    "CreatePartitions",
    listeners=("broker", "controller"),
    valid="0-3",
    flexible="2+",
    request=[
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string"),
                F("count", "int32"),
                F(
                    "assignments",
                    "[]struct",
                    nullable="0+",
                    fields=[
                        F("broker_ids", "[]int32"),
                    ],
                ),
            ],
        ),
        F("timeout_ms", "int32"),
        F("validate_only", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "results",
            "[]struct",
            fields=[
                F("name", "string"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
            ],
        ),
    ],
)
