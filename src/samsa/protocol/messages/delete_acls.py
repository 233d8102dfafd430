"""DeleteAcls (key 31): remove the ACL bindings matching each filter.

Transcribed from Kafka's DeleteAclsRequest/DeleteAclsResponse.json: v1 adds
the pattern type, v2 is flexible, v3 adds the USER resource type; Kafka 4
removed v0 (KIP-896), and so does Samsa.
"""

from samsa.protocol.messages.describe_acls import ACL_FILTER
from samsa.protocol.schema import F, api

API = api(
    31,
    "DeleteAcls",
    listeners=("broker", "controller"),
    valid="1-3",
    flexible="2+",
    request=[
        F("filters", "[]struct", fields=ACL_FILTER),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "filter_results",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+"),
                F(
                    "matching_acls",
                    "[]struct",
                    fields=[
                        F("error_code", "int16"),
                        F("error_message", "string", nullable="0+"),
                        F("resource_type", "int8"),
                        F("resource_name", "string"),
                        F("pattern_type", "int8", "1+", default=3),
                        F("principal", "string"),
                        F("host", "string"),
                        F("operation", "int8"),
                        F("permission_type", "int8"),
                    ],
                ),
            ],
        ),
    ],
)
