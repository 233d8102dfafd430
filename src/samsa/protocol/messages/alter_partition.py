"""AlterPartition (key 56): a partition leader asks the controller to change its ISR.

Transcribed from Kafka's AlterPartitionRequest/Response.json, versions 2-3 (Kafka
4.0 removed v0-1, which named topics instead of ids, so ``topic_name`` is gone
too).  Flexible from v0.  v3 (KIP-903) replaces ``new_isr`` with
``new_isr_with_epochs`` so the controller can reject a replica that restarted.
"""

from samsa.protocol.schema import F, api

API = api(
    56,
    "AlterPartition",
    listeners=("controller",),
    valid="2-3",
    flexible="0+",
    request=[
        F("broker_id", "int32"),
        F("broker_epoch", "int64", default=-1),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic_id", "uuid", "2+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("leader_epoch", "int32"),
                        F("new_isr", "[]int32", "0-2"),
                        F(
                            "new_isr_with_epochs",
                            "[]struct",
                            "3+",
                            fields=[
                                F("broker_id", "int32", "3+"),
                                F("broker_epoch", "int64", "3+", default=-1),
                            ],
                        ),
                        F("leader_recovery_state", "int8", "1+", default=0),
                        F("partition_epoch", "int32"),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic_id", "uuid", "2+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                        F("leader_id", "int32"),
                        F("leader_epoch", "int32"),
                        F("isr", "[]int32"),
                        F("leader_recovery_state", "int8", "1+", default=0),
                        F("partition_epoch", "int32"),
                    ],
                ),
            ],
        ),
    ],
)
