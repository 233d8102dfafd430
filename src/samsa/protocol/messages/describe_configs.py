"""DescribeConfigs (key 32): read topic and broker configuration.

Transcribed from Kafka's DescribeConfigsRequest/DescribeConfigsResponse.json,
versions 1-4 (Kafka 4.0 dropped v0).  Null ``configuration_keys`` means "all".
"""

from samsa.protocol.schema import F, api

API = api(
    32,
    "DescribeConfigs",
    listeners=("broker", "controller"),
    valid="1-4",
    flexible="4+",
    request=[
        F(
            "resources",
            "[]struct",
            fields=[
                F("resource_type", "int8"),
                F("resource_name", "string"),
                F("configuration_keys", "[]string", nullable="0+"),
            ],
        ),
        F("include_synonyms", "bool", "1+", default=False),
        F("include_documentation", "bool", "3+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "results",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+"),
                F("resource_type", "int8"),
                F("resource_name", "string"),
                F(
                    "configs",
                    "[]struct",
                    fields=[
                        F("name", "string"),
                        F("value", "string", nullable="0+"),
                        F("read_only", "bool"),
                        F("config_source", "int8", "1+", default=-1),
                        F("is_sensitive", "bool"),
                        F(
                            "synonyms",
                            "[]struct",
                            "1+",
                            fields=[
                                F("name", "string", "1+"),
                                F("value", "string", "1+", nullable="0+"),
                                F("source", "int8", "1+"),
                            ],
                        ),
                        F("config_type", "int8", "3+", default=0),
                        F("documentation", "string", "3+", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
)
