"""WriteTxnMarkers (key 27): the transaction coordinator asks partition leaders to write commit/abort markers.

Kafka 4.0 removed v0; v2 (KIP-1228) tells each marker's transaction version,
so a leader can tell a transaction version 2 marker from an older one.
"""

from samsa.protocol.schema import F, api

API = api(
    27,
    "WriteTxnMarkers",
    valid="1-2",
    flexible="1+",
    request=[
        F(
            "markers",
            "[]struct",
            fields=[
                F("producer_id", "int64"),
                F("producer_epoch", "int16"),
                F("transaction_result", "bool"),
                F(
                    "topics",
                    "[]struct",
                    fields=[
                        F("name", "string"),
                        F("partition_indexes", "[]int32"),
                    ],
                ),
                F("coordinator_epoch", "int32"),
                F("transaction_version", "int8", "2+", default=0),
            ],
        ),
    ],
    response=[
        F(
            "markers",
            "[]struct",
            fields=[
                F("producer_id", "int64"),
                F(
                    "topics",
                    "[]struct",
                    fields=[
                        F("name", "string"),
                        F(
                            "partitions",
                            "[]struct",
                            fields=[
                                F("partition_index", "int32"),
                                F("error_code", "int16"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)
