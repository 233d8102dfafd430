"""StreamsGroupDescribe (key 89): a streams group's epochs, its topology as configured
(partition counts decided, internal topics named) and each member's current and
target tasks.  v1 (KIP-1331, KIP-1357) adds the topology description a plugin
keeps (Samsa has none: NOT_STORED when asked) and the assignor's name."""

from samsa.protocol.messages.streams_group_heartbeat import (
    ENDPOINT,
    KEY_VALUE,
    TASK_IDS,
    TASK_OFFSET,
)
from samsa.protocol.schema import F, api

TOPIC_INFO = [
    F("name", "string"),
    F("partitions", "int32"),
    F("replication_factor", "int16"),
    F("topic_configs", "[]struct", fields=KEY_VALUE),
]
ASSIGNMENT = [
    F("active_tasks", "[]struct", fields=TASK_IDS),
    F("standby_tasks", "[]struct", fields=TASK_IDS),
    F("warmup_tasks", "[]struct", fields=TASK_IDS),
]
DESCRIPTION_NODE = [
    F("name", "string"),
    F("node_type", "int8"),
    F("source_topics", "[]string"),
    F("sink_topic", "string", nullable="0+", default=None),
    F("stores", "[]string"),
    F("successors", "[]string"),
]
TOPOLOGY_DESCRIPTION = [
    F(
        "subtopologies",
        "[]struct",
        fields=[
            F("subtopology_id", "string"),
            F("nodes", "[]struct", fields=DESCRIPTION_NODE),
        ],
    ),
    F(
        "global_stores",
        "[]struct",
        fields=[
            F("source", "struct", fields=DESCRIPTION_NODE),
            F("processor", "struct", fields=DESCRIPTION_NODE),
        ],
    ),
]

API = api(
    89,
    "StreamsGroupDescribe",
    valid="0-1",
    flexible="0+",
    request=[
        F("group_ids", "[]string"),
        F("include_authorized_operations", "bool"),
        F("include_topology_description", "bool", "1+", default=False),
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
                F(
                    "topology",
                    "struct",
                    nullable="0+",
                    default=None,
                    fields=[
                        F("epoch", "int32"),
                        F(
                            "subtopologies",
                            "[]struct",
                            nullable="0+",
                            default=None,
                            fields=[
                                F("subtopology_id", "string"),
                                F("source_topics", "[]string"),
                                F("repartition_sink_topics", "[]string"),
                                F("state_changelog_topics", "[]struct", fields=TOPIC_INFO),
                                F("repartition_source_topics", "[]struct", fields=TOPIC_INFO),
                            ],
                        ),
                    ],
                ),
                F(
                    "members",
                    "[]struct",
                    fields=[
                        F("member_id", "string"),
                        F("member_epoch", "int32"),
                        F("instance_id", "string", nullable="0+", default=None),
                        F("rack_id", "string", nullable="0+", default=None),
                        F("client_id", "string"),
                        F("client_host", "string"),
                        F("topology_epoch", "int32"),
                        F("process_id", "string"),
                        F("user_endpoint", "struct", nullable="0+", default=None, fields=ENDPOINT),
                        F("client_tags", "[]struct", fields=KEY_VALUE),
                        F("task_offsets", "[]struct", fields=TASK_OFFSET),
                        F("task_end_offsets", "[]struct", fields=TASK_OFFSET),
                        F("assignment", "struct", fields=ASSIGNMENT),
                        F("target_assignment", "struct", fields=ASSIGNMENT),
                        F("is_classic", "bool"),
                    ],
                ),
                F("authorized_operations", "int32", default=-2147483648),
                F(
                    "topology_description",
                    "struct",
                    "1+",
                    nullable="1+",
                    default=None,
                    fields=TOPOLOGY_DESCRIPTION,
                ),
                F("topology_description_status", "int8", "1+", default=0),
                F("assignor_name", "string", "1+", nullable="1+", default=None),
            ],
        ),
    ],
)
