"""AlterConfigs (key 33): replace a resource's whole configuration (legacy form).

Transcribed from Kafka's AlterConfigsRequest/AlterConfigsResponse.json.
"""

from samsa.protocol.schema import F, api

API = api(
    33,
    "AlterConfigs",
    listeners=("broker", "controller"),
    valid="0-2",
    flexible="2+",
    request=[
        F(
            "resources",
            "[]struct",
            fields=[
                F("resource_type", "int8"),
                F("resource_name", "string"),
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
        F("validate_only", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "responses",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+"),
                F("resource_type", "int8"),
                F("resource_name", "string"),
            ],
        ),
    ],
)
