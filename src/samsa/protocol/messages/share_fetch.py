"""ShareFetch (key 78): acquire records of share partitions, with acknowledgements piggy-backed.

v1 is Kafka 4.1's stable version (v0, 4.0's early access, is gone).  The response
carries the log's record batches as stored (``records``) next to the offset
ranges this member acquired (``acquired_records``): the client delivers only the
records inside those ranges, so the broker never re-encodes a batch.  v2
(KIP-1206, KIP-1222) adds ``share_acquire_mode`` (0 batch-optimized: whole
batches, ``max_records`` a soft limit; 1 record-limit: never more than
``max_records`` records) and the Renew acknowledgement type (4), flagged by
``is_renew_ack``: a renewed record keeps its acquisition lock for another
lock timeout.
"""

from samsa.protocol.schema import F, api

ACKNOWLEDGEMENT_BATCH = [
    F("first_offset", "int64"),
    F("last_offset", "int64"),
    F("acknowledge_types", "[]int8"),
]

CURRENT_LEADER = [F("leader_id", "int32"), F("leader_epoch", "int32")]

NODE_ENDPOINTS = F(
    "node_endpoints",
    "[]struct",
    fields=[
        F("node_id", "int32"),
        F("host", "string"),
        F("port", "int32"),
        F("rack", "string", nullable="0+", default=None),
    ],
)

API = api(
    78,
    "ShareFetch",
    valid="1-2",
    flexible="0+",
    request=[
        F("group_id", "string", nullable="0+", default=None),
        F("member_id", "string", nullable="0+"),
        F("share_session_epoch", "int32"),
        F("max_wait_ms", "int32"),
        F("min_bytes", "int32"),
        F("max_bytes", "int32", default=0x7FFFFFFF),
        F("max_records", "int32", "1+"),
        F("batch_size", "int32", "1+"),
        F("share_acquire_mode", "int8", "2+", default=0),
        F("is_renew_ack", "bool", "2+", default=False),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic_id", "uuid"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("partition_max_bytes", "int32", "0"),
                        F("acknowledgement_batches", "[]struct", fields=ACKNOWLEDGEMENT_BATCH),
                    ],
                ),
            ],
        ),
        F(
            "forgotten_topics_data",
            "[]struct",
            fields=[F("topic_id", "uuid"), F("partitions", "[]int32")],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("acquisition_lock_timeout_ms", "int32"),
        F(
            "responses",
            "[]struct",
            fields=[
                F("topic_id", "uuid"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                        F("error_message", "string", nullable="0+", default=None),
                        F("acknowledge_error_code", "int16"),
                        F("acknowledge_error_message", "string", nullable="0+", default=None),
                        F("current_leader", "struct", fields=CURRENT_LEADER),
                        F("records", "records"),
                        F(
                            "acquired_records",
                            "[]struct",
                            fields=[
                                F("first_offset", "int64"),
                                F("last_offset", "int64"),
                                F("delivery_count", "int16"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        NODE_ENDPOINTS,
    ],
)
