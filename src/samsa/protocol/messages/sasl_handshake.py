"""SaslHandshake (key 17): pick a SASL mechanism.

Transcribed from Kafka's SaslHandshakeRequest/SaslHandshakeResponse.json.  Never
flexible.  After v0 the client sends raw SASL tokens; after v1 it wraps them in
SaslAuthenticate requests (Kafka 4.0 kept v0 for kafka-python 2.0.2).
"""

from samsa.protocol.schema import F, api

API = api(
    17,
    "SaslHandshake",
    listeners=("broker", "controller"),
    valid="0-1",
    flexible="none",
    request=[
        F("mechanism", "string"),
    ],
    response=[
        F("error_code", "int16"),
        F("mechanisms", "[]string"),
    ],
)
