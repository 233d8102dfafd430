"""Delegation token records: a token's state, and its removal (KIP-48 in KRaft).

Transcribed from Kafka's DelegationTokenRecord and RemoveDelegationTokenRecord
JSON, flexible from v0.  Principals are written as Kafka prints them
(``User:alice``); the record never holds the token's HMAC, which every node
derives from the token id and ``delegation.token.secret.key``.  A renewal or
an expiry change writes the whole DelegationTokenRecord again.
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F

DELEGATION_TOKEN = DataSchema(
    "DelegationTokenRecord",
    valid=(0, 0),
    flexible=0,
    fields=(
        F("owner", "string"),
        F("requester", "string"),
        F("renewers", "[]string"),
        F("issue_timestamp", "int64"),
        F("max_timestamp", "int64"),
        F("expiration_timestamp", "int64"),
        F("token_id", "string"),
    ),
)

REMOVE_DELEGATION_TOKEN = DataSchema(
    "RemoveDelegationTokenRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("token_id", "string"),),
)

# (api key, schema), as Kafka's MetadataRecordType numbers them.
RECORDS: tuple[tuple[int, DataSchema], ...] = (
    (10, DELEGATION_TOKEN),
    (26, REMOVE_DELEGATION_TOKEN),
)
