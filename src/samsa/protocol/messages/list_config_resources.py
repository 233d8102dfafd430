"""ListConfigResources (key 74): the names of resources that hold configs.

v0 was ListClientMetricsResources (client metrics subscriptions only); v1
(KIP-1142) lists any resource type asked for (``resource_types``, the
DescribeConfigs codes: 2 topic, 4 broker, 8 broker logger, 16 client metrics,
32 group), every supported type when the list is empty.
"""

from samsa.protocol.schema import F, api

API = api(
    74,
    "ListConfigResources",
    valid="0-1",
    flexible="0+",
    request=[F("resource_types", "[]int8", "1+")],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F(
            "config_resources",
            "[]struct",
            fields=[
                F("resource_name", "string"),
                F("resource_type", "int8", "1+", default=16),
            ],
        ),
    ],
)
