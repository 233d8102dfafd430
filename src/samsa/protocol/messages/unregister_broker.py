"""UnregisterBroker (key 64): remove a broker's registration from the cluster metadata.

Transcribed from Kafka's UnregisterBrokerRequest/Response.json, version 0,
flexible from v0.
"""

from samsa.protocol.schema import F, api

API = api(
    64,
    "UnregisterBroker",
    listeners=("broker", "controller"),
    valid="0",
    flexible="0+",
    request=[F("broker_id", "int32")],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
    ],
)
