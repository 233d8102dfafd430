"""ConsumerGroupDescribe (key 69): a KIP-848 group's epochs, members and assignments.

v1 (KIP-1099) tells each member's type: 0 a classic member, 1 a consumer one.
"""

from samsa.protocol.schema import F, api

ASSIGNMENT = [
    F(
        "topic_partitions",
        "[]struct",
        fields=[F("topic_id", "uuid"), F("topic_name", "string"), F("partitions", "[]int32")],
    ),
]

API = api(
    69,
    "ConsumerGroupDescribe",
    valid="0-1",
    flexible="0+",
    request=[
        F("group_ids", "[]string"),
        F("include_authorized_operations", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "groups",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
                F("group_id", "string"),
                F("group_state", "string"),
                F("group_epoch", "int32"),
                F("assignment_epoch", "int32"),
                F("assignor_name", "string"),
                F(
                    "members",
                    "[]struct",
                    fields=[
                        F("member_id", "string"),
                        F("instance_id", "string", nullable="0+", default=None),
                        F("rack_id", "string", nullable="0+", default=None),
                        F("member_epoch", "int32"),
                        F("client_id", "string"),
                        F("client_host", "string"),
                        F("subscribed_topic_names", "[]string"),
                        F("subscribed_topic_regex", "string", nullable="0+", default=None),
                        F("assignment", "struct", fields=ASSIGNMENT),
                        F("target_assignment", "struct", fields=ASSIGNMENT),
                        F("member_type", "int8", "1+", default=-1),
                    ],
                ),
                F("authorized_operations", "int32", default=-2147483648),
            ],
        ),
    ],
)
