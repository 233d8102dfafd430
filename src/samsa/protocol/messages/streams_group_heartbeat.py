"""StreamsGroupHeartbeat (key 88): KIP-1071's one call for a Kafka Streams member to join,
stay in and leave a streams group.

A joining member (epoch 0) sends its topology: the subtopologies with their
source, repartition and changelog topics, which the coordinator validates
against the cluster and whose missing internal topics it creates.  Later
heartbeats carry only what changed (null otherwise): the tasks the member owns,
its endpoint, its client tags.  The answer carries the member epoch, the tasks
the member may run now (active, standby, warm-up) and the group's status
(missing topics, stale topology, a requested shutdown).  v1 adds
TopologyDescriptionRequired (KIP-1331) and the 64-bit AcceptableRecoveryLag.
"""

from samsa.protocol.schema import F, Field, api

KEY_VALUE = [F("key", "string"), F("value", "string")]
TOPIC_INFO = [
    F("name", "string"),
    F("partitions", "int32"),
    F("replication_factor", "int16"),
    F("topic_configs", "[]struct", fields=KEY_VALUE),
]
ENDPOINT = [F("host", "string"), F("port", "uint16")]
TASK_IDS = [F("subtopology_id", "string"), F("partitions", "[]int32")]
TASK_OFFSET = [F("subtopology_id", "string"), F("partition", "int32"), F("offset", "int64")]

SUBTOPOLOGY = [
    F("subtopology_id", "string"),
    F("source_topics", "[]string"),
    F("source_topic_regex", "[]string"),
    F("state_changelog_topics", "[]struct", fields=TOPIC_INFO),
    F("repartition_sink_topics", "[]string"),
    F("repartition_source_topics", "[]struct", fields=TOPIC_INFO),
    F(
        "copartition_groups",
        "[]struct",
        fields=[
            F("source_topics", "[]int16"),
            F("source_topic_regex", "[]int16"),
            F("repartition_source_topics", "[]int16"),
        ],
    ),
]


def _tasks(name: str) -> Field:
    return F(name, "[]struct", nullable="0+", default=None, fields=TASK_IDS)


API = api(
    88,
    "StreamsGroupHeartbeat",
    valid="0-1",
    flexible="0+",
    request=[
        F("group_id", "string"),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("endpoint_information_epoch", "int32"),
        F("instance_id", "string", nullable="0+", default=None),
        F("rack_id", "string", nullable="0+", default=None),
        F("rebalance_timeout_ms", "int32", default=-1),
        F(
            "topology",
            "struct",
            nullable="0+",
            default=None,
            fields=[F("epoch", "int32"), F("subtopologies", "[]struct", fields=SUBTOPOLOGY)],
        ),
        _tasks("active_tasks"),
        _tasks("standby_tasks"),
        _tasks("warmup_tasks"),
        F("process_id", "string", nullable="0+", default=None),
        F("user_endpoint", "struct", nullable="0+", default=None, fields=ENDPOINT),
        F("client_tags", "[]struct", nullable="0+", default=None, fields=KEY_VALUE),
        F("task_offsets", "[]struct", nullable="0+", default=None, fields=TASK_OFFSET),
        F("task_end_offsets", "[]struct", nullable="0+", default=None, fields=TASK_OFFSET),
        F("shutdown_application", "bool", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("heartbeat_interval_ms", "int32"),
        F("acceptable_recovery_lag_legacy", "int32", "0"),
        F("task_offset_interval_ms", "int32"),
        F("acceptable_recovery_lag", "int64", "1+", default=-1),
        F(
            "status",
            "[]struct",
            nullable="0+",
            default=None,
            fields=[F("status_code", "int8"), F("status_detail", "string")],
        ),
        _tasks("active_tasks"),
        _tasks("standby_tasks"),
        _tasks("warmup_tasks"),
        F("topology_description_required", "bool", "1+", default=False),
        F("endpoint_information_epoch", "int32"),
        F(
            "partitions_by_user_endpoint",
            "[]struct",
            nullable="0+",
            default=None,
            fields=[
                F("user_endpoint", "struct", fields=ENDPOINT),
                F(
                    "active_partitions",
                    "[]struct",
                    fields=[F("topic", "string"), F("partitions", "[]int32")],
                ),
                F(
                    "standby_partitions",
                    "[]struct",
                    fields=[F("topic", "string"), F("partitions", "[]int32")],
                ),
            ],
        ),
    ],
)
