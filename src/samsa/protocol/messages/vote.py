"""Vote (key 52): a KRaft candidate (or pre-candidate) asks a voter for its vote.

Transcribed from Kafka's VoteRequest/VoteResponse.json, versions 0-2, flexible
from v0.  v1 adds the directory ids of KIP-853 and the response's tagged leader
endpoints; v2 adds ``pre_vote`` (KIP-996) and renames the candidate fields to
``replica_*`` -- the names here are v2's, the bytes of every version are the same.
"""

from samsa.protocol.schema import F, api

API = api(
    52,
    "Vote",
    listeners=("controller",),
    valid="0-2",
    flexible="0+",
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
                        F("replica_epoch", "int32"),
                        F("replica_id", "int32"),
                        F("replica_directory_id", "uuid", "1+"),
                        F("voter_directory_id", "uuid", "1+"),
                        F("last_offset_epoch", "int32"),
                        F("last_offset", "int64"),
                        F("pre_vote", "bool", "2+"),
                    ],
                ),
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
                        F("vote_granted", "bool"),
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
