"""Heartbeat (key 12): a member proves it is alive and learns of rebalances."""

from samsa.protocol.schema import F, api

API = api(
    12,
    "Heartbeat",
    valid="0-4",
    flexible="4+",
    request=[
        F("group_id", "string"),
        F("generation_id", "int32"),
        F("member_id", "string"),
        F("group_instance_id", "string", "3+", nullable="3+", default=None),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16"),
    ],
)
