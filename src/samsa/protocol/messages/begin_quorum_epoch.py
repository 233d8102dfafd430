"""BeginQuorumEpoch (key 53): a newly elected KRaft leader announces itself to the voters.

Transcribed from Kafka's BeginQuorumEpochRequest/Response.json, versions 0-1.
v0 is not flexible; v1 (KIP-853) becomes flexible and adds the receiving voter's
id and directory id, the leader's endpoints, and the response's tagged leader
endpoints.
"""

from samsa.protocol.schema import F, api

API = api(
    53,
    "BeginQuorumEpoch",
    listeners=("controller",),
    valid="0-1",
    flexible="1+",
    request=[
        F("cluster_id", "string", nullable="0+", default=None),
        F("voter_id", "int32", "1+", default=-1),
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
                        F("voter_directory_id", "uuid", "1+"),
                        F("leader_id", "int32"),
                        F("leader_epoch", "int32"),
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
