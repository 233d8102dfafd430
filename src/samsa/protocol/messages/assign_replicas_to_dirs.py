"""AssignReplicasToDirs (key 73): a broker tells the controller which of its log
dirs holds each of its replicas (KIP-858, JBOD in KRaft).

Transcribed from Kafka's AssignReplicasToDirsRequest/Response.json, version 0,
flexible.  The controller keeps the answer in the partitions' ``directories``,
so that when a heartbeat names a failed dir it knows which partitions to move.
"""

from samsa.protocol.schema import F, Field, api


def _directories(partition_fields: list[Field]) -> Field:
    return F(
        "directories",
        "[]struct",
        fields=[
            F("id", "uuid"),
            F(
                "topics",
                "[]struct",
                fields=[
                    F("topic_id", "uuid"),
                    F("partitions", "[]struct", fields=partition_fields),
                ],
            ),
        ],
    )


API = api(
    73,
    "AssignReplicasToDirs",
    listeners=("controller",),
    valid="0",
    flexible="0+",
    request=[
        F("broker_id", "int32"),
        F("broker_epoch", "int64", default=-1),
        _directories([F("partition_index", "int32")]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        _directories([F("partition_index", "int32"), F("error_code", "int16")]),
    ],
)
