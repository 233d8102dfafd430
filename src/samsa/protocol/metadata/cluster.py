"""Cluster-wide records: configs, feature levels, producer id blocks, no-ops, and
the markers of metadata transactions (KIP-868).

Transcribed from Kafka's ConfigRecord, FeatureLevelRecord, ProducerIdsRecord and
NoOpRecord JSON, flexible from v0.  A ConfigRecord with a null ``value`` deletes
the key.  ``resource_type`` is Kafka's ConfigResource.Type (2 topic, 4 broker,
8 broker logger, 16 client metrics, 32 group).  FeatureLevelRecord stays at v0
forever: a log starts with the metadata.version record, and a reader must be
able to parse it before it knows which versions the rest may use.  The active
controller appends NoOpRecords to advance the high watermark while idle.
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F

CONFIG = DataSchema(
    "ConfigRecord",
    valid=(0, 0),
    flexible=0,
    fields=(
        F("resource_type", "int8"),
        F("resource_name", "string"),
        F("name", "string"),
        F("value", "string", nullable="0+", default=None),
    ),
)

FEATURE_LEVEL = DataSchema(
    "FeatureLevelRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("name", "string"), F("feature_level", "int16")),
)

PRODUCER_IDS = DataSchema(
    "ProducerIdsRecord",
    valid=(0, 0),
    flexible=0,
    fields=(
        F("broker_id", "int32"),
        F("broker_epoch", "int64", default=-1),
        F("next_producer_id", "int64"),
    ),
)

NO_OP = DataSchema("NoOpRecord", valid=(0, 0), flexible=0, fields=())

# KIP-868 metadata transactions: the records between a Begin and its End are
# one controller write, applied all at once or (Abort) not at all.
BEGIN_TRANSACTION = DataSchema(
    "BeginTransactionRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("name", "string", nullable="0+", tag=0, tagged="0+", default=None),),
)
END_TRANSACTION = DataSchema("EndTransactionRecord", valid=(0, 0), flexible=0, fields=())
ABORT_TRANSACTION = DataSchema(
    "AbortTransactionRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("reason", "string", nullable="0+", tag=0, tagged="0+", default=None),),
)

# (api key, schema), as Kafka's MetadataRecordType numbers them.
RECORDS: tuple[tuple[int, DataSchema], ...] = (
    (4, CONFIG),
    (12, FEATURE_LEVEL),
    (15, PRODUCER_IDS),
    (20, NO_OP),
    (23, BEGIN_TRANSACTION),
    (24, END_TRANSACTION),
    (25, ABORT_TRANSACTION),
)
