"""EndTxn (key 26): commit or abort the producer's ongoing transaction.

v4 only allows the TRANSACTION_ABORTABLE error; v5 is transaction version 2
(KIP-890 part 2): the coordinator bumps the epoch on every commit or abort and
answers the producer id and epoch the client must use next.
"""

from samsa.protocol.schema import F, api

API = api(
    26,
    "EndTxn",
    valid="0-5",
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
        F("producer_id", "int64", "5+", default=-1),
        F("producer_epoch", "int16", "5+", default=-1),
    ],
)
