"""ListTransactions (key 66): transactional ids known to a coordinator, for admin tools."""

from samsa.protocol.schema import F, api

API = api(
    66,
    "ListTransactions",
    valid="0",
    flexible="0+",
    request=[
        F("state_filters", "[]string"),
        F("producer_id_filters", "[]int64"),
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
