"""InitProducerId (key 22): allocate a producer id and epoch for idempotence/transactions.

Transcribed from Kafka's InitProducerIdRequest/InitProducerIdResponse.json,
versions 0-5.  The Java producer is idempotent by default, so every Java or
Spark producer sends this first; v3+ lets a producer bump its own epoch.
"""

from samsa.protocol.schema import F, api

API = api(
    22,
    "InitProducerId",
    valid="0-5",
    flexible="2+",
    request=[
        F("transactional_id", "string", nullable="0+"),
        F("transaction_timeout_ms", "int32"),
        F("producer_id", "int64", "3+", default=-1),
        F("producer_epoch", "int16", "3+", default=-1),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("producer_id", "int64", default=-1),
        F("producer_epoch", "int16"),
    ],
)
