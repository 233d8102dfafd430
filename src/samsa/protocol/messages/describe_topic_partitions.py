"""DescribeTopicPartitions (key 75): topics and their partitions, a page at a time.

KIP-966's replacement for describing topics through Metadata: newer
``kafka-topics --describe`` and the Admin client's ``describeTopics`` use it.
The answer holds at most ``response_partition_limit`` partitions; when more are
left, ``next_cursor`` names the topic and partition the next request starts at
(``cursor``).  Each partition also tells its eligible leader replicas (ELR) and
last known ELR, null while the cluster does not keep them.
"""

from samsa.protocol.schema import F, api

CURSOR = [F("topic_name", "string"), F("partition_index", "int32")]

API = api(
    75,
    "DescribeTopicPartitions",
    valid="0",
    flexible="0+",
    request=[
        F("topics", "[]struct", fields=[F("name", "string")]),
        F("response_partition_limit", "int32", default=2000),
        F("cursor", "struct", nullable="0+", default=None, fields=CURSOR),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("error_code", "int16"),
                F("name", "string", nullable="0+"),
                F("topic_id", "uuid"),
                F("is_internal", "bool", default=False),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("error_code", "int16"),
                        F("partition_index", "int32"),
                        F("leader_id", "int32"),
                        F("leader_epoch", "int32", default=-1),
                        F("replica_nodes", "[]int32"),
                        F("isr_nodes", "[]int32"),
                        F("eligible_leader_replicas", "[]int32", nullable="0+", default=None),
                        F("last_known_elr", "[]int32", nullable="0+", default=None),
                        F("offline_replicas", "[]int32"),
                    ],
                ),
                F("topic_authorized_operations", "int32", default=-2147483648),
            ],
        ),
        F("next_cursor", "struct", nullable="0+", default=None, fields=CURSOR),
    ],
)
