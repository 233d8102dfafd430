"""DescribeQuorum (key 55): the KRaft leader's view of voters and observers.

Transcribed from Kafka's DescribeQuorumRequest/Response.json, versions 0-2,
flexible from v0.  v1 (KIP-836) adds the fetch and caught-up timestamps of each
replica; v2 (KIP-853) adds error messages, replica directory ids and the voters'
listeners (``nodes``).  Kafka's ``ReplicaState`` common struct appears twice
(``current_voters``, ``observers``); it is declared once here.
"""

from samsa.protocol.schema import F, api

_REPLICA_STATE = [
    F("replica_id", "int32"),
    F("replica_directory_id", "uuid", "2+"),
    F("log_end_offset", "int64"),
    F("last_fetch_timestamp", "int64", "1+", default=-1),
    F("last_caught_up_timestamp", "int64", "1+", default=-1),
]

API = api(
    55,
    "DescribeQuorum",
    listeners=("broker", "controller"),
    valid="0-2",
    flexible="0+",
    request=[
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic_name", "string"),
                F("partitions", "[]struct", fields=[F("partition_index", "int32")]),
            ],
        ),
    ],
    response=[
        F("error_code", "int16"),
        F("error_message", "string", "2+", nullable="2+"),
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
                        F("error_message", "string", "2+", nullable="2+"),
                        F("leader_id", "int32"),
                        F("leader_epoch", "int32"),
                        F("high_watermark", "int64"),
                        F("current_voters", "[]struct", fields=_REPLICA_STATE),
                        F("observers", "[]struct", fields=_REPLICA_STATE),
                    ],
                ),
            ],
        ),
        F(
            "nodes",
            "[]struct",
            "2+",
            fields=[
                F("node_id", "int32", "2+"),
                F(
                    "listeners",
                    "[]struct",
                    "2+",
                    fields=[
                        F("name", "string", "2+"),
                        F("host", "string", "2+"),
                        F("port", "uint16", "2+"),
                    ],
                ),
            ],
        ),
    ],
)
