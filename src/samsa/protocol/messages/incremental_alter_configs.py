"""IncrementalAlterConfigs (key 44): set, delete, append or subtract single config keys.

Transcribed from Kafka's IncrementalAlterConfigsRequest/Response.json.
``config_operation``: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT.
"""

from samsa.protocol.schema import F, api

API = api(
    44,
    "IncrementalAlterConfigs",
    listeners=("broker", "controller"),
    valid="0-1",
    flexible="1+",
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
                        F("config_operation", "int8"),
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
