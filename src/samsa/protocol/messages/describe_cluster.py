"""DescribeCluster (key 60): cluster id, controller and brokers, for the Java Admin client.

Transcribed from Kafka's DescribeClusterRequest/DescribeClusterResponse.json,
versions 0-1 (v2's fenced-broker fields are not needed).  Flexible from v0.
"""

from samsa.protocol.schema import F, api

API = api(
    60,
    "DescribeCluster",
    valid="0-1",
    flexible="0+",
    request=[
        F("include_cluster_authorized_operations", "bool"),
        F("endpoint_type", "int8", "1+", default=1),
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
            ],
        ),
        F("cluster_authorized_operations", "int32", default=-2147483648),
    ],
)
