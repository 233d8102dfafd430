"""BrokerHeartbeat (key 63): a registered broker's lease renewal with the controller.

Transcribed from Kafka's BrokerHeartbeatRequest/Response.json, versions 0-1,
flexible from v0.  v1 adds the tagged ``offline_log_dirs`` (KIP-858).  The
response's defaults say a broker is fenced and not caught up until told otherwise.
"""

from samsa.protocol.schema import F, api

API = api(
    63,
    "BrokerHeartbeat",
    listeners=("controller",),
    valid="0-1",
    flexible="0+",
    request=[
        F("broker_id", "int32"),
        F("broker_epoch", "int64", default=-1),
        F("current_metadata_offset", "int64"),
        F("want_fence", "bool"),
        F("want_shut_down", "bool"),
        F("offline_log_dirs", "[]uuid", "1+", tag=0, tagged="1+"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("is_caught_up", "bool", default=False),
        F("is_fenced", "bool", default=True),
        F("should_shut_down", "bool"),
    ],
)
