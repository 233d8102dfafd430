"""ApiVersions (key 18): the first request of every client.

Flexible from v3, but its response always uses response header v0 (KIP-511).
v4 lets a supported feature's minimum be 0 (older versions leave such features
out); v5 (KIP-1242) carries the cluster id and node id the client means to reach,
so a broker that is neither answers REBOOTSTRAP_REQUIRED.
"""

from samsa.protocol.schema import F, api

API = api(
    18,
    "ApiVersions",
    listeners=("broker", "controller"),
    valid="0-5",
    flexible="3+",
    request=[
        F("client_software_name", "string", "3+"),
        F("client_software_version", "string", "3+"),
        F("cluster_id", "string", "5+", nullable="5+", default=None),
        F("node_id", "int32", "5+", default=-1),
    ],
    response=[
        F("error_code", "int16"),
        F(
            "api_keys",
            "[]struct",
            fields=[
                F("api_key", "int16"),
                F("min_version", "int16"),
                F("max_version", "int16"),
            ],
        ),
        F("throttle_time_ms", "int32", "1+"),
        F(
            "supported_features",
            "[]struct",
            "3+",
            tag=0,
            tagged="3+",
            fields=[
                F("name", "string"),
                F("min_version", "int16"),
                F("max_version", "int16"),
            ],
        ),
        F("finalized_features_epoch", "int64", "3+", tag=1, tagged="3+", default=-1),
        F(
            "finalized_features",
            "[]struct",
            "3+",
            tag=2,
            tagged="3+",
            fields=[
                F("name", "string"),
                F("max_version_level", "int16"),
                F("min_version_level", "int16"),
            ],
        ),
        F("zk_migration_ready", "bool", "3+", tag=3, tagged="3+", default=False),
    ],
)
