"""Broker lifecycle records: registration, fencing, controlled shutdown, removal.

Transcribed from Kafka's RegisterBrokerRecord, UnregisterBrokerRecord,
FenceBrokerRecord, UnfenceBrokerRecord and BrokerRegistrationChangeRecord JSON.
Every metadata record is flexible from v0.  Since metadata.version 3.3 Kafka
fences and unfences with BrokerRegistrationChangeRecord (``fenced``: 1 fenced,
-1 unfenced, 0 no change); the older Fence/Unfence records still replay.
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F

REGISTER_BROKER = DataSchema(
    "RegisterBrokerRecord",
    valid=(0, 3),
    flexible=0,
    fields=(
        F("broker_id", "int32"),
        F("is_migrating_zk_broker", "bool", "2+", default=False),
        F("incarnation_id", "uuid"),
        F("broker_epoch", "int64"),
        F(
            "end_points",
            "[]struct",
            fields=[
                F("name", "string"),
                F("host", "string"),
                F("port", "uint16"),
                F("security_protocol", "int16"),
            ],
        ),
        F(
            "features",
            "[]struct",
            fields=[
                F("name", "string"),
                F("min_supported_version", "int16"),
                F("max_supported_version", "int16"),
            ],
        ),
        F("rack", "string", nullable="0+", default=None),
        F("fenced", "bool", default=True),
        F("in_controlled_shutdown", "bool", "1+", default=False),
        F("log_dirs", "[]uuid", "3+", tag=0, tagged="3+"),
    ),
)

UNREGISTER_BROKER = DataSchema(
    "UnregisterBrokerRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("broker_id", "int32"), F("broker_epoch", "int64")),
)

FENCE_BROKER = DataSchema(
    "FenceBrokerRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("id", "int32"), F("epoch", "int64")),
)

UNFENCE_BROKER = DataSchema(
    "UnfenceBrokerRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("id", "int32"), F("epoch", "int64")),
)

BROKER_REGISTRATION_CHANGE = DataSchema(
    "BrokerRegistrationChangeRecord",
    valid=(0, 2),
    flexible=0,
    fields=(
        F("broker_id", "int32"),
        F("broker_epoch", "int64"),
        F("fenced", "int8", tag=0, tagged="0+"),
        F("in_controlled_shutdown", "int8", "1+", tag=1, tagged="1+"),
        F("log_dirs", "[]uuid", "2+", tag=2, tagged="2+"),
    ),
)

# (api key, schema), as Kafka's MetadataRecordType numbers them.
RECORDS: tuple[tuple[int, DataSchema], ...] = (
    (0, REGISTER_BROKER),
    (1, UNREGISTER_BROKER),
    (7, FENCE_BROKER),
    (8, UNFENCE_BROKER),
    (17, BROKER_REGISTRATION_CHANGE),
)
