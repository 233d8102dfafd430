"""AddRaftVoter (key 80): add a controller to the KRaft voter set (KIP-853).

Transcribed from Kafka's AddRaftVoterRequest/Response.json, versions 0-1,
flexible from v0.  v1 (Kafka 4.2) appends ``ack_when_committed``: true (v0's
only behaviour) answers once the new voter set is committed, false as soon as
the leader has appended it.
"""

from samsa.protocol.schema import F, api

API = api(
    80,
    "AddRaftVoter",
    listeners=("broker", "controller"),
    valid="0-1",
    flexible="0+",
    request=[
        F("cluster_id", "string", nullable="0+"),
        F("timeout_ms", "int32"),
        F("voter_id", "int32"),
        F("voter_directory_id", "uuid"),
        F(
            "listeners",
            "[]struct",
            fields=[F("name", "string"), F("host", "string"), F("port", "uint16")],
        ),
        F("ack_when_committed", "bool", "1+", default=True),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
    ],
)
