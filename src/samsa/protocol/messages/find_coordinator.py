"""FindCoordinator (key 10): which broker coordinates a group or transactional id.

``key_type`` 0 = group, 1 = transaction.  v4 batches keys (KIP-699): the request
carries ``coordinator_keys`` and the answer one ``coordinators`` entry per key
instead of the single top-level node.  v5 only allows TRANSACTION_ABORTABLE
(KIP-890); v6 adds ``key_type`` 2 = share, whose key is
``groupId:topicId:partition`` (KIP-932: the share coordinator of one share
partition's state).
"""

from samsa.protocol.schema import F, api

API = api(
    10,
    "FindCoordinator",
    valid="0-6",
    flexible="3+",
    request=[
        F("key", "string", "0-3"),
        F("key_type", "int8", "1+", default=0),
        F("coordinator_keys", "[]string", "4+"),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "0-3"),
        F("error_message", "string", "1-3", nullable="1-3"),
        F("node_id", "int32", "0-3"),
        F("host", "string", "0-3"),
        F("port", "int32", "0-3"),
        F(
            "coordinators",
            "[]struct",
            "4+",
            fields=[
                F("key", "string", "4+"),
                F("node_id", "int32", "4+"),
                F("host", "string", "4+"),
                F("port", "int32", "4+"),
                F("error_code", "int16", "4+"),
                F("error_message", "string", "4+", nullable="4+"),
            ],
        ),
    ],
)
