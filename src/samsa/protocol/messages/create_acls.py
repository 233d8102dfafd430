"""CreateAcls (key 30): add ACL bindings (written by the controller as records).

Transcribed from Kafka's CreateAclsRequest/CreateAclsResponse.json: v1 adds
the pattern type, v2 is flexible, v3 adds the USER resource type; Kafka 4
removed v0 (KIP-896), and so does Samsa.
"""

from samsa.protocol.schema import F, api

API = api(
    30,
    "CreateAcls",
    listeners=("broker", "controller"),
    valid="1-3",
    flexible="2+",
    request=[
        F(
            "creations",
            "[]struct",
            fields=[
                F("resource_type", "int8"),
                F("resource_name", "string"),
                F("resource_pattern_type", "int8", "1+", default=3),
                F("principal", "string"),
                F("host", "string"),
                F("operation", "int8"),
                F("permission_type", "int8"),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "results",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+"),
            ],
        ),
    ],
)
