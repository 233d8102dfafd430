"""ACL records: Kafka's AccessControlEntryRecord and RemoveAccessControlEntryRecord.

Transcribed from Kafka's JSON, flexible from v0.  Each ACL has a uuid the
controller picks when it creates it; removing an ACL names only that id.  The
codes are Kafka's ResourceType, PatternType, AclOperation and
AclPermissionType.
"""

from __future__ import annotations

from samsa.protocol.schema import DataSchema, F

ACCESS_CONTROL_ENTRY = DataSchema(
    "AccessControlEntryRecord",
    valid=(0, 0),
    flexible=0,
    fields=(
        F("id", "uuid"),
        F("resource_type", "int8"),
        F("resource_name", "string"),
        F("pattern_type", "int8"),
        F("principal", "string"),
        F("host", "string"),
        F("operation", "int8"),
        F("permission_type", "int8"),
    ),
)

REMOVE_ACCESS_CONTROL_ENTRY = DataSchema(
    "RemoveAccessControlEntryRecord",
    valid=(0, 0),
    flexible=0,
    fields=(F("id", "uuid"),),
)

# (api key, schema), as Kafka's MetadataRecordType numbers them.
RECORDS: tuple[tuple[int, DataSchema], ...] = (
    (18, ACCESS_CONTROL_ENTRY),
    (19, REMOVE_ACCESS_CONTROL_ENTRY),
)
