"""What the Log hands back from appends and reads."""

from __future__ import annotations

from typing import NamedTuple

from samsa.storage.segments.file_region import FileRegion


class AppendInfo(NamedTuple):
    """What an append did.  ``offset_of_max_timestamp`` is the last offset of
    the batch holding the max timestamp (batch granularity, like Kafka's
    shallow offset); ``log_append_time`` is -1 for CreateTime.

    A NamedTuple: one is built per append, and a frozen dataclass costs
    several times as much to construct on the produce and commit paths."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    num_batches: int
    valid_bytes: int


class FetchDataInfo(NamedTuple):
    """Result of a read: whole batches starting with the one holding
    ``fetch_offset`` (possibly before it), as a FileRegion to sendfile, or
    ``b""`` when there is nothing to return.  ``segment_base_offset`` and
    ``position`` locate the first batch (Kafka's LogOffsetMetadata)."""

    fetch_offset: int
    records: FileRegion | bytes
    segment_base_offset: int
    position: int
