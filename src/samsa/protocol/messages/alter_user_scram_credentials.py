"""AlterUserScramCredentials (key 51): add, replace or delete SCRAM credentials.

Transcribed from Kafka's AlterUserScramCredentialsRequest/Response.json.  The
client salts the password itself (``salted_password``); the broker forwards
the request to the controller, which stores the derived keys.
"""

from samsa.protocol.schema import F, api

API = api(
    51,
    "AlterUserScramCredentials",
    listeners=("broker", "controller"),
    valid="0",
    flexible="0+",
    request=[
        F("deletions", "[]struct", fields=[F("name", "string"), F("mechanism", "int8")]),
        F(
            "upsertions",
            "[]struct",
            fields=[
                F("name", "string"),
                F("mechanism", "int8"),
                F("iterations", "int32"),
                F("salt", "bytes"),
                F("salted_password", "bytes"),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "results",
            "[]struct",
            fields=[
                F("user", "string"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
            ],
        ),
    ],
)
