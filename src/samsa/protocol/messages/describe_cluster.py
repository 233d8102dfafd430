"""DescribeCluster (key 60): cluster id, controller and brokers, for the Java Admin client.

Transcribed from Kafka's DescribeClusterRequest/DescribeClusterResponse.json,
versions 0-2.  Flexible from v0.  v1 adds the endpoint type (KIP-919: a broker
describes brokers, a controller controllers); v2 (KIP-1073) lets the client ask
for fenced brokers too, each marked ``is_fenced``.
"""

from samsa.protocol.schema import F, api

API = api(
    60,
    "DescribeCluster",
    listeners=("broker", "controller"),
    valid="0-2",
    flexible="0+",
    request=[
        F("include_cluster_authorized_operations", "bool"),
        F("endpoint_type", "int8", "1+", default=1),
        F("include_fenced_brokers", "bool", "2+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("endpoint_type", "int8", "1+", default=1),
        F("cluster_id", "string"),
        F("controller_id", "int32", default=-1),
        F(
            "brokers",
            "[]struct",
            fields=[
                F("broker_id", "int32"),
                F("host", "string"),
                F("port", "int32"),
                F("rack", "string", nullable="0+", default=None),
                F("is_fenced", "bool", "2+", default=False),
            ],
        ),
        F("cluster_authorized_operations", "int32", default=-2147483648),
    ],
)
