"""EndQuorumEpoch (key 54): a resigning KRaft leader asks the voters to elect a successor.

Transcribed from Kafka's EndQuorumEpochRequest/Response.json, versions 0-1.
v0 is not flexible and names its successors by id (``preferred_successors``);
v1 (KIP-853) is flexible, replaces them with ``preferred_candidates`` (id and
directory id), adds the leader's endpoints and the response's tagged endpoints.
"""

from samsa.protocol.schema import F, api

API = api(
    54,
    "EndQuorumEpoch",
    listeners=("controller",),
    valid="0-1",
    flexible="1+",
    request=[
        F("cluster_id", "string", nullable="0+", default=None),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic_name", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("leader_id", "int32"),
                        F("leader_epoch", "int32"),
                        F("preferred_successors", "[]int32", "0"),
                        F(
                            "preferred_candidates",
                            "[]struct",
                            "1+",
                            fields=[
                                F("candidate_id", "int32", "1+"),
                                F("candidate_directory_id", "uuid", "1+"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        F(
            "leader_endpoints",
            "[]struct",
            "1+",
            fields=[
                F("name", "string", "1+"),
                F("host", "string", "1+"),
                F("port", "uint16", "1+"),
            ],
        ),
    ],
    response=[
        F("error_code", "int16"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic_name", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                        F("leader_id", "int32"),
                        F("leader_epoch", "int32"),
                    ],
                ),
            ],
        ),
        F(
            "node_endpoints",
            "[]struct",
            "1+",
            tag=0,
            tagged="1+",
            fields=[
                F("node_id", "int32", "1+"),
                F("host", "string", "1+"),
                F("port", "uint16", "1+"),
            ],
        ),
    ],
)
