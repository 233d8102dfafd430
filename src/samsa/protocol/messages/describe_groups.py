"""DescribeGroups (key 15): state, protocol and members of groups, for admin tools.

v6 (KIP-1043) answers an unknown group GROUP_ID_NOT_FOUND with an
``error_message`` (older versions describe it as Dead, with no error).
"""

from samsa.protocol.schema import F, api

API = api(
    15,
    "DescribeGroups",
    valid="0-6",
    flexible="5+",
    request=[
        F("groups", "[]string"),
        F("include_authorized_operations", "bool", "3+"),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F(
            "groups",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("error_message", "string", "6+", nullable="6+", default=None),
                F("group_id", "string"),
                F("group_state", "string"),
                F("protocol_type", "string"),
                F("protocol_data", "string"),
                F(
                    "members",
                    "[]struct",
                    fields=[
                        F("member_id", "string"),
                        F("group_instance_id", "string", "4+", nullable="4+", default=None),
                        F("client_id", "string"),
                        F("client_host", "string"),
                        F("member_metadata", "bytes"),
                        F("member_assignment", "bytes"),
                    ],
                ),
                F("authorized_operations", "int32", "3+", default=-2147483648),
            ],
        ),
    ],
)
