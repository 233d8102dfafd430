"""ListTransactions (key 66): transactional ids known to a coordinator, for admin tools.

v1 (KIP-994) keeps only transactions running longer than ``duration_filter``
ms; v2 (KIP-1152) only those whose id matches ``transactional_id_pattern``, a
regular expression (a bad one is answered INVALID_REGULAR_EXPRESSION).
"""

from samsa.protocol.schema import F, api

API = api(
    66,
    "ListTransactions",
    valid="0-2",
    flexible="0+",
    request=[
        F("state_filters", "[]string"),
        F("producer_id_filters", "[]int64"),
        F("duration_filter", "int64", "1+", default=-1),
        F("transactional_id_pattern", "string", "2+", nullable="2+", default=None),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("unknown_state_filters", "[]string"),
        F(
            "transaction_states",
            "[]struct",
            fields=[
                F("transactional_id", "string"),
                F("producer_id", "int64"),
                F("transaction_state", "string"),
            ],
        ),
    ],
)
