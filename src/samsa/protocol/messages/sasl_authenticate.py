"""SaslAuthenticate (key 36): carry SASL tokens inside Kafka framing.

Transcribed from Kafka's SaslAuthenticateRequest/SaslAuthenticateResponse.json.
"""

from samsa.protocol.schema import F, api

API = api(
    36,
    "SaslAuthenticate",
    listeners=("broker", "controller"),
    valid="0-2",
    flexible="2+",
    request=[
        F("auth_bytes", "bytes"),
    ],
    response=[
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
        F("auth_bytes", "bytes"),
        F("session_lifetime_ms", "int64", "1+", default=0),
    ],
)
