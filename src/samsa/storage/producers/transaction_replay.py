"""Keep the producer state and the aborted transaction index in step with the log.

Every path that puts batches into a partition's log -- recovery at start-up,
a follower's appends and truncations -- replays the batch headers into the
producer state.  Transaction markers need a little more than the header: the
marker's type (an ABORT adds an entry to the segment's ``.txnindex``) and the
coordinator epoch, both in the one control record, which is decoded here.
Only control batches are ever decoded, and they are a few dozen bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from samsa.errors import DecodeError
from samsa.protocol.batches.record_batch import BatchHeader
from samsa.protocol.batches.record_reader import decode_batch
from samsa.storage.log import Log
from samsa.storage.producers.entry import NO_COORDINATOR_EPOCH
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.snapshot import newest_snapshot_offset

__all__ = ["load_producer_state", "parse_marker", "replay_batches", "replay_log"]

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")

BufferLike = bytes | bytearray | memoryview


def parse_marker(buf: BufferLike, pos: int, header: BatchHeader) -> tuple[int | None, int]:
    """(control type, coordinator epoch) of the control batch at ``pos``; the type is
    None for a control record that is no transaction marker."""
    try:
        records = decode_batch(buf, pos, header)
    except DecodeError:
        return None, NO_COORDINATOR_EPOCH
    if not records or records[0].key is None or len(records[0].key) < _KEY.size:
        return None, NO_COORDINATOR_EPOCH
    _, control_type = _KEY.unpack_from(records[0].key)
    value = records[0].value
    epoch = NO_COORDINATOR_EPOCH
    if value is not None and len(value) >= _VALUE.size:
        epoch = _VALUE.unpack_from(value)[1]
    return (control_type if control_type in (0, 1) else None), epoch


def replay_batches(
    log_: Log,
    state: ProducerStateManager,
    batches: Iterable[tuple[BufferLike, int, BatchHeader]],
) -> None:
    """Replay (buffer, position, header) of batches now in ``log_``; abort markers
    go into the aborted transaction index."""
    for buf, pos, header in batches:
        if header.is_control and header.producer_id >= 0:
            control_type, coordinator_epoch = parse_marker(buf, pos, header)
            aborted = state.replay_header(
                header, coordinator_epoch=coordinator_epoch, control_type=control_type
            )
            if aborted is not None:
                log_.append_aborted_txn(aborted)
        else:
            state.replay_header(header)


def replay_log(
    log_: Log, state: ProducerStateManager, from_offset: int, end: int | None = None
) -> None:
    """Rebuild state and aborted transaction index from ``from_offset`` to ``end``
    (default the log end): index entries of markers there are dropped first and
    re-added by the replay, so a crash mid-write never leaves one twice or lost.
    Nothing to replay reads nothing (a clean shutdown's snapshot is at the end)."""
    if from_offset >= (log_.log_end_offset if end is None else min(end, log_.log_end_offset)):
        return
    log_.truncate_aborted_txns_from(from_offset)
    for header in log_.iter_batch_headers(from_offset):
        if end is not None and header.base_offset >= end:
            break
        if header.is_control and header.producer_id >= 0:
            replay_batches(log_, state, [(log_.control_batch_bytes(header), 0, header)])
        else:
            state.replay_header(header)


def load_producer_state(
    log_: Log, state: ProducerStateManager, file_names: Iterable[str] | None
) -> None:
    """Load the partition's producer state from its newest snapshot and replay
    the log after it -- on first use when the snapshot is at the log end (a
    clean shutdown wrote it, nothing follows it), else now.  ``file_names``:
    the directory's listing, if the log's load just took it.

    The deferred load is bounded by today's log end: a follower appends
    before it replays, and the batches it appends are replayed by it."""
    start, end = log_.log_start_offset, log_.log_end_offset
    if file_names is not None and end > start and newest_snapshot_offset(file_names) == end:

        def load() -> None:
            # The listing may be stale by then: the load lists the directory.
            replay_log(log_, state, state.load(start, end), end)

        state.load_on_first_use(load, end)
        return
    replay_log(log_, state, state.load(start, end, file_names=file_names))
