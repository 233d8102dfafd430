"""DescribeUserScramCredentials (key 50): which SCRAM mechanisms each user has.

Transcribed from Kafka's DescribeUserScramCredentialsRequest/Response.json.
A null or empty ``users`` describes every user.  Only the mechanism and its
iteration count are ever sent back, never salts or keys.
"""

from samsa.protocol.schema import F, api

API = api(
    50,
    "DescribeUserScramCredentials",
    listeners=("broker", "controller"),
    valid="0",
    flexible="0+",
    request=[
        F("users", "[]struct", nullable="0+", default=None, fields=[F("name", "string")]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F(
            "results",
            "[]struct",
            fields=[
                F("user", "string"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
                F(
                    "credential_infos",
                    "[]struct",
                    fields=[F("mechanism", "int8"), F("iterations", "int32")],
                ),
            ],
        ),
    ],
)
