"""DeleteRecords (key 21): advance a partition's log start offset.

Transcribed from Kafka's DeleteRecordsRequest/DeleteRecordsResponse.json.
"""

from samsa.protocol.schema import F, api

API = api(
    21,
    "DeleteRecords",
    valid="0-2",
    flexible="2+",
    request=[
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
                        F("offset", "int64"),
                    ],
                ),
            ],
        ),
        F("timeout_ms", "int32"),
    ],
    response=[
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
                        F("low_watermark", "int64"),
                        F("error_code", "int16"),
                    ],
                ),
            ],
        ),
    ],
)
