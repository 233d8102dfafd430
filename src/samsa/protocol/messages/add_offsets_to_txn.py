"""AddOffsetsToTxn (key 25): a transaction will also commit offsets of this group.

v4 only allows TRANSACTION_ABORTABLE among the answers (KIP-890): an older
client is told INVALID_TXN_STATE or UNKNOWN_SERVER_ERROR in its place.
"""

from samsa.protocol.schema import F, api

API = api(
    25,
    "AddOffsetsToTxn",
    valid="0-4",
    flexible="3+",
    request=[
        F("transactional_id", "string"),
        F("producer_id", "int64"),
        F("producer_epoch", "int16"),
        F("group_id", "string"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
    ],
)
