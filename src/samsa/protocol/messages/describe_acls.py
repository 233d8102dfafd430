"""DescribeAcls (key 29): the ACL bindings matching one filter.

Transcribed from Kafka's DescribeAclsRequest/DescribeAclsResponse.json: v1
adds the pattern type, v2 is flexible, v3 adds the USER resource type; Kafka 4
removed v0 (KIP-896), and so does Samsa.
"""

from samsa.protocol.schema import F, api

ACL_FILTER = [
    F("resource_type_filter", "int8"),
    F("resource_name_filter", "string", nullable="0+"),
    F("pattern_type_filter", "int8", "1+", default=3),
    F("principal_filter", "string", nullable="0+"),
    F("host_filter", "string", nullable="0+"),
    F("operation", "int8"),
    F("permission_type", "int8"),
]
"""An ACL filter's fields, the request itself here and each of DeleteAcls' filters."""

API = api(
    29,
    "DescribeAcls",
    listeners=("broker", "controller"),
    valid="1-3",
    flexible="2+",
    request=ACL_FILTER,
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
        F(
            "resources",
            "[]struct",
            fields=[
                F("resource_type", "int8"),
                F("resource_name", "string"),
                F("pattern_type", "int8", "1+", default=3),
                F(
                    "acls",
                    "[]struct",
                    fields=[
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
