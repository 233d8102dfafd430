"""EndTxn (key 26): commit or abort the producer's ongoing transaction."""

from samsa.protocol.schema import F, api

API = api(
    26,
    "EndTxn",
    valid="0-3",
    flexible="3+",
    request=[
        F("transactional_id", "string"),
        F("producer_id", "int64"),
        F("producer_epoch", "int16"),
        F("committed", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
    ],
)
