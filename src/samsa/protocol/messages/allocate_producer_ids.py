"""AllocateProducerIds (key 67): a broker takes a block of producer ids from the controller.

Transcribed from Kafka's AllocateProducerIdsRequest/Response.json, version 0,
flexible from v0.  The block is ``[producer_id_start, producer_id_start +
producer_id_len)``.
"""

from samsa.protocol.schema import F, api

API = api(
    67,
    "AllocateProducerIds",
    listeners=("controller",),
    valid="0",
    flexible="0+",
    request=[
        F("broker_id", "int32"),
        F("broker_epoch", "int64", default=-1),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("producer_id_start", "int64"),
        F("producer_id_len", "int32"),
    ],
)
