"""Kafka's record format (RecordBatch v2) in one import.

The work is split by user, so each reads only what it needs:

* :mod:`samsa.protocol.batches.record_batch` - the 61-byte header: walk, validate and
  stamp batches without touching records (broker, storage recovery);
* :mod:`samsa.protocol.batches.record_builder` - encode records into a batch (producer,
  transaction markers);
* :mod:`samsa.protocol.batches.record_reader` - decode records out of fetched batches
  (consumer);
* :mod:`samsa.protocol.batches.compression` - the codecs, with Kafka's framing.
"""

from __future__ import annotations

from samsa.protocol.batches.compression import Compression, compress, decompress
from samsa.protocol.batches.record_batch import (
    BATCH_HEADER_SIZE,
    CURRENT_MAGIC,
    LOG_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    RECORD_BATCH_OVERHEAD,
    BatchHeader,
    batch_crc,
    iter_batches,
    read_batch_header,
    set_log_append_time,
    set_producer_state,
    stamp_batch,
    validate_batch,
    validate_client_batch,
)
from samsa.protocol.batches.record_builder import (
    ControlType,
    RecordBatchBuilder,
    RecordHeader,
    control_batch,
    estimate_record_size,
    parse_control_key,
)
from samsa.protocol.batches.record_reader import Record, decode_batch, decode_records

__all__ = [
    "BATCH_HEADER_SIZE",
    "CURRENT_MAGIC",
    "LOG_OVERHEAD",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "RECORD_BATCH_OVERHEAD",
    "BatchHeader",
    "Compression",
    "ControlType",
    "Record",
    "RecordBatchBuilder",
    "RecordHeader",
    "batch_crc",
    "compress",
    "control_batch",
    "decode_batch",
    "decode_records",
    "decompress",
    "estimate_record_size",
    "iter_batches",
    "parse_control_key",
    "read_batch_header",
    "set_log_append_time",
    "set_producer_state",
    "stamp_batch",
    "validate_batch",
    "validate_client_batch",
]
