"""RemoveRaftVoter (key 81): remove a controller from the KRaft voter set (KIP-853).

Transcribed from Kafka's RemoveRaftVoterRequest/Response.json, version 0,
flexible from v0.
"""

from samsa.protocol.schema import F, api

API = api(
    81,
    "RemoveRaftVoter",
    listeners=("broker", "controller"),
    valid="0",
    flexible="0+",
    request=[
        F("cluster_id", "string", nullable="0+"),
        F("voter_id", "int32"),
        F("voter_directory_id", "uuid"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
    ],
)
