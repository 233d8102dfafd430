"""UpdateRaftVoter (key 82): a voter tells the leader its current endpoints and kraft versions.

Transcribed from Kafka's UpdateRaftVoterRequest/Response.json, version 0,
flexible from v0.  The response's tagged ``current_leader`` lets a voter that
asked the wrong node find the leader (with its host and port) without a round
of Fetch.
"""

from samsa.protocol.schema import F, api

API = api(
    82,
    "UpdateRaftVoter",
    listeners=("controller",),
    valid="0",
    flexible="0+",
    request=[
        F("cluster_id", "string", nullable="0+"),
        F("current_leader_epoch", "int32"),
        F("voter_id", "int32"),
        F("voter_directory_id", "uuid"),
        F(
            "listeners",
            "[]struct",
            fields=[F("name", "string"), F("host", "string"), F("port", "uint16")],
        ),
        F(
            "kraft_version_feature",
            "struct",
            fields=[
                F("min_supported_version", "int16"),
                F("max_supported_version", "int16"),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F(
            "current_leader",
            "struct",
            tag=0,
            tagged="0+",
            fields=[
                F("leader_id", "int32", default=-1),
                F("leader_epoch", "int32", default=-1),
                F("host", "string"),
                F("port", "int32"),
            ],
        ),
    ],
)
