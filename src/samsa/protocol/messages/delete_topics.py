"""DeleteTopics (key 20): delete topics by name (v6+ also by topic id).

Transcribed from Kafka's DeleteTopicsRequest/DeleteTopicsResponse.json, versions
1-6.  Up to v5 the request is a plain list of names; v6 replaces it with structs.
"""

from samsa.protocol.schema import F, api

API = api(
    20,
    "DeleteTopics",
    listeners=("broker", "controller"),
    valid="1-6",
    flexible="4+",
    request=[
        F(
            "topics",
            "[]struct",
            "6+",
            fields=[
                F("name", "string", "6+", nullable="6+", default=None),
                F("topic_id", "uuid", "6+"),
            ],
        ),
        F("topic_names", "[]string", "0-5"),
        F("timeout_ms", "int32"),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F(
            "responses",
            "[]struct",
            fields=[
                F("name", "string", nullable="6+"),
                F("topic_id", "uuid", "6+"),
                F("error_code", "int16"),
                F("error_message", "string", "5+", nullable="5+", default=None),
            ],
        ),
    ],
)
