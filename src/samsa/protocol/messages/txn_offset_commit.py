"""TxnOffsetCommit (key 28): offsets committed as part of a transaction.

v3 adds the group generation and member fields so the coordinator can fence
zombie consumers (KIP-447).  v4 only allows TRANSACTION_ABORTABLE; v5 comes
from a transaction version 2 producer, which sends no AddOffsetsToTxn: the
group's ``__consumer_offsets`` partition is added to the transaction by the
broker (KIP-890 part 2).  v6 names topics by ``topic_id`` instead of
``name`` (KIP-1319) and may answer GROUP_ID_NOT_FOUND, STALE_MEMBER_EPOCH and
UNKNOWN_TOPIC_ID.
"""

from samsa.protocol.schema import F, api

API = api(
    28,
    "TxnOffsetCommit",
    valid="0-6",
    flexible="3+",
    request=[
        F("transactional_id", "string"),
        F("group_id", "string"),
        F("producer_id", "int64"),
        F("producer_epoch", "int16"),
        F("generation_id", "int32", "3+", default=-1),
        F("member_id", "string", "3+", default=""),
        F("group_instance_id", "string", "3+", nullable="3+", default=None),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string", "0-5"),
                F("topic_id", "uuid", "6+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("committed_offset", "int64"),
                        F("committed_leader_epoch", "int32", "2+", default=-1),
                        F("committed_metadata", "string", nullable="0+"),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string", "0-5"),
                F("topic_id", "uuid", "6+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                    ],
                ),
            ],
        ),
    ],
)
