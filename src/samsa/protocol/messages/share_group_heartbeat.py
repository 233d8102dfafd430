"""ShareGroupHeartbeat (key 76): KIP-932's one call for joining, staying in and leaving a share group.

Version 0 was Kafka 4.0's early access and was removed in 4.1; v1 is the stable
version Kafka 4.1's ``KafkaShareConsumer`` and librdkafka's share consumer send.
Unlike ConsumerGroupHeartbeat there are no owned partitions to reconcile: several
members may share each partition, so the coordinator hands out its target at once.
"""

from samsa.protocol.messages.consumer_group_heartbeat import TOPIC_PARTITIONS
from samsa.protocol.schema import F, api

API = api(
    76,
    "ShareGroupHeartbeat",
    valid="1",
    flexible="0+",
    request=[
        F("group_id", "string"),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("rack_id", "string", nullable="0+", default=None),
        F("subscribed_topic_names", "[]string", nullable="0+", default=None),
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
