"""ConsumerGroupHeartbeat (key 68): KIP-848's one call for joining, staying and leaving.

The member sends its subscription and owned partitions only when they changed
(null otherwise); the coordinator answers with the member epoch and, when it
changed, the partitions the member may use now.  v1 adds the broker-evaluated
topic regex and has the client generate its own member id (KIP-1082).
"""

from samsa.protocol.schema import F, api

TOPIC_PARTITIONS = [F("topic_id", "uuid"), F("partitions", "[]int32")]

API = api(
    68,
    "ConsumerGroupHeartbeat",
    valid="0-1",
    flexible="0+",
    request=[
        F("group_id", "string"),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("instance_id", "string", nullable="0+", default=None),
        F("rack_id", "string", nullable="0+", default=None),
        F("rebalance_timeout_ms", "int32", default=-1),
        F("subscribed_topic_names", "[]string", nullable="0+", default=None),
        F("subscribed_topic_regex", "string", "1+", nullable="1+", default=None),
        F("server_assignor", "string", nullable="0+", default=None),
        F(
            "topic_partitions",
            "[]struct",
            nullable="0+",
            default=None,
            fields=TOPIC_PARTITIONS,
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("member_id", "string", nullable="0+", default=None),
        F("member_epoch", "int32"),
        F("heartbeat_interval_ms", "int32"),
        F(
            "assignment",
            "struct",
            nullable="0+",
            default=None,
            fields=[F("topic_partitions", "[]struct", fields=TOPIC_PARTITIONS)],
        ),
    ],
)
