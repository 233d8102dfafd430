"""JoinGroup (key 11): first step of a classic group rebalance.

Protocol metadata is opaque ``bytes`` here; for consumers it holds a
``samsa.protocol.consumer_protocol`` Subscription.  v5 adds static membership
(``group_instance_id``), v9 lets the leader skip assignment (KIP-814).
"""

from samsa.protocol.schema import F, api

API = api(
    11,
    "JoinGroup",
    valid="0-9",
    flexible="6+",
    request=[
        F("group_id", "string"),
        F("session_timeout_ms", "int32"),
        F("rebalance_timeout_ms", "int32", "1+", default=-1),
        F("member_id", "string"),
        F("group_instance_id", "string", "5+", nullable="5+", default=None),
        F("protocol_type", "string"),
        F(
            "protocols",
            "[]struct",
            fields=[
                F("name", "string"),
                F("metadata", "bytes"),
            ],
        ),
        F("reason", "string", "8+", nullable="8+", default=None),
    ],
    response=[
        F("throttle_time_ms", "int32", "2+"),
        F("error_code", "int16"),
        F("generation_id", "int32", default=-1),
        F("protocol_type", "string", "7+", nullable="7+", default=None),
        F("protocol_name", "string", nullable="7+"),
        F("leader", "string"),
        F("skip_assignment", "bool", "9+", default=False),
        F("member_id", "string"),
        F(
            "members",
            "[]struct",
            fields=[
                F("member_id", "string"),
                F("group_instance_id", "string", "5+", nullable="5+", default=None),
                F("metadata", "bytes"),
            ],
        ),
    ],
)
