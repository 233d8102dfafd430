"""ShareAcknowledge (key 79): acknowledge acquired records without fetching more.

v1 is Kafka 4.1's; v2 (KIP-1222) allows the Renew acknowledgement type (4),
flagged by ``is_renew_ack``, and answers the ``acquisition_lock_timeout_ms``
a renewed record is locked for.
"""

from samsa.protocol.messages.share_fetch import (
    ACKNOWLEDGEMENT_BATCH,
    CURRENT_LEADER,
    NODE_ENDPOINTS,
)
from samsa.protocol.schema import F, api

API = api(
    79,
    "ShareAcknowledge",
    valid="1-2",
    flexible="0+",
    request=[
        F("group_id", "string", nullable="0+", default=None),
        F("member_id", "string", nullable="0+"),
        F("share_session_epoch", "int32"),
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
                        F("acknowledgement_batches", "[]struct", fields=ACKNOWLEDGEMENT_BATCH),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("acquisition_lock_timeout_ms", "int32", "2+"),
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
                        F("current_leader", "struct", fields=CURRENT_LEADER),
                    ],
                ),
            ],
        ),
        NODE_ENDPOINTS,
    ],
)
