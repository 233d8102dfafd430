"""One way to build metadata records from the controller, whatever their fields.

``samsa.protocol.metadata_records.make_record(name, **fields)`` cannot take a
field called ``name`` (TopicRecord, ConfigRecord and FeatureLevelRecord have
one): its own first parameter shadows it.  ``build_record`` takes the record
name under another parameter and passes that field around it.  When
``make_record`` makes its first parameter positional-only, this becomes a plain
alias.
"""

from __future__ import annotations

from typing import Any

from samsa.protocol.metadata_records import MetadataRecord, make_record

_ABSENT: Any = object()


def build_record(record_name: str, /, **fields: Any) -> MetadataRecord:
    """A record at its latest version; fields not given take the schema's defaults."""
    name_field = fields.pop("name", _ABSENT)
    record = make_record(record_name, **fields)
    if name_field is not _ABSENT:
        if "name" not in record.body:
            raise ValueError(f"{record_name} has no field(s) name")
        record.body["name"] = name_field
    return record
