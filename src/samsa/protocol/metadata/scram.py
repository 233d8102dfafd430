"""SCRAM credential records: a user's credential per mechanism, and its removal.

Transcribed from Kafka's UserScramCredentialRecord and
RemoveUserScramCredentialRecord JSON (Kafka 3.5+ layout), flexible from v0.
The record carries what the server checks a login against (salt, stored key,
server key, iterations), never the password nor the salted password: the
controller derives the keys from the salted password the client sent.
``mechanism`` is Kafka's ScramMechanism type (1 SCRAM-SHA-256, 2 SCRAM-SHA-512).
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F

USER_SCRAM_CREDENTIAL = DataSchema(
    "UserScramCredentialRecord",
    valid=(0, 0),
    flexible=0,
    fields=(
        F("name", "string"),
        F("mechanism", "int8"),
        F("salt", "bytes"),
        F("stored_key", "bytes"),
        F("server_key", "bytes"),
        F("iterations", "int32"),
    ),
)

REMOVE_USER_SCRAM_CREDENTIAL = DataSchema(
    "RemoveUserScramCredentialRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("name", "string"), F("mechanism", "int8")),
)

# (api key, schema), as Kafka's MetadataRecordType numbers them.
RECORDS: tuple[tuple[int, DataSchema], ...] = (
    (11, USER_SCRAM_CREDENTIAL),
    (22, REMOVE_USER_SCRAM_CREDENTIAL),
)
