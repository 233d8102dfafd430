"""BrokerRegistration (key 62): a broker registers with the active controller at start-up.

Transcribed from Kafka's BrokerRegistrationRequest/Response.json, versions 0-4,
flexible from v0.  v1 adds ``is_migrating_zk_broker``, v2 the available log
directories (KIP-858), v3 the epoch before a clean shutdown (KIP-966); v4 only
lets ``features`` report a minimum version of 0 (KAFKA-17011).
"""

from samsa.protocol.schema import F, api

API = api(
    62,
    "BrokerRegistration",
    listeners=("controller",),
    valid="0-4",
    flexible="0+",
    request=[
        F("broker_id", "int32"),
        F("cluster_id", "string"),
        F("incarnation_id", "uuid"),
        F(
            "listeners",
            "[]struct",
            fields=[
                F("name", "string"),
                F("host", "string"),
                F("port", "uint16"),
                F("security_protocol", "int16"),
            ],
        ),
        F(
            "features",
            "[]struct",
            fields=[
                F("name", "string"),
                F("min_supported_version", "int16"),
                F("max_supported_version", "int16"),
            ],
        ),
        F("rack", "string", nullable="0+"),
        F("is_migrating_zk_broker", "bool", "1+", default=False),
        F("log_dirs", "[]uuid", "2+"),
        F("previous_broker_epoch", "int64", "3+", default=-1),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("broker_epoch", "int64", default=-1),
    ],
)
