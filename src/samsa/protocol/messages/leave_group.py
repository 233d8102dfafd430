"""LeaveGroup (key 13): members leave a group without waiting for the session timeout.

Up to v2 one member leaves; from v3 a batch of members (by member id or static
instance id) leaves at once, each with its own error code.
"""

from samsa.protocol.schema import F, api

API = api(
    13,
    "LeaveGroup",
    valid="0-5",
    flexible="4+",
    request=[
        F("group_id", "string"),
        F("member_id", "string", "0-2"),
        F(
            "members",
            "[]struct",
            "3+",
            fields=[
                F("member_id", "string", "3+"),
                F("group_instance_id", "string", "3+", nullable="3+", default=None),
                F("reason", "string", "5+", nullable="5+", default=None),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16"),
        F(
            "members",
            "[]struct",
            "3+",
            fields=[
                F("member_id", "string", "3+"),
                F("group_instance_id", "string", "3+", nullable="3+"),
                F("error_code", "int16", "3+"),
            ],
        ),
    ],
)
