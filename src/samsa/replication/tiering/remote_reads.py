"""Reads of the remote tier for a broker's clients and followers.

* ``fetch``: a consumer's Fetch at an offset below the local log start and at
  or above the log start (Kafka's ``RemoteLogManager.read`` through a
  RemoteLogReader): at most ``remote.log.reader.threads`` at once, at most
  ``remote.log.reader.max.pending.tasks`` waiting, bounded by
  ``remote.fetch.max.wait.ms``, and skipped while the broker is over
  ``remote.log.manager.fetch.max.bytes.per.second``.  A read that times out or
  is skipped answers no records (the consumer asks again); a store that
  fails answers KAFKA_STORAGE_ERROR, which clients retry after refreshing
  metadata; an offset no remote segment holds answers OFFSET_OUT_OF_RANGE.
  read_committed readers get the aborted transactions of the remote
  segments, and of the local ones when the search reaches them.
* ``offset_for_timestamp``: ListOffsets by timestamp through the remote time
  indexes first, bounded by ``remote.list.offsets.request.timeout.ms``.
* ``rebuild_follower``: a follower's state at the leader's local log start
  from the remote tier (``samsa.tiered.follower_state``).

Everything here awaits the store and the index cache (their own threads):
the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.partition import Partition
from samsa.replication.tiering.partition_tasks import TieredPartition
from samsa.replication.tiering.remote_log_manager import RemoteLogManager
from samsa.storage.leader_epoch_cache import EpochEndOffset
from samsa.storage.segments.transaction_index import AbortedTxn
from samsa.tiered import follower_state, remote_fetch
from samsa.tiered.store.base import RemoteStorageError

__all__ = ["RemoteRead", "fetch", "offset_for_timestamp", "rebuild_follower"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RemoteRead:
    """What a remote fetch answers: records (maybe empty) and, for read_committed,
    the aborted transactions they overlap."""

    records: bytes
    aborted: list[AbortedTxn] | None


def _ready_state(rlm: RemoteLogManager, partition: Partition) -> TieredPartition:
    state = rlm.tiered(partition.topic, partition.index)
    if state is None or not state.ready:
        # The replay of its metadata is not done yet (a leader just moved here).
        raise KafkaError(
            ErrorCode.KAFKA_STORAGE_ERROR,
            f"[{partition.name}] the remote tier is not ready on this broker yet",
        )
    return state


async def fetch(
    rlm: RemoteLogManager,
    partition: Partition,
    fetch_offset: int,
    max_bytes: int,
    *,
    min_one: bool,
    read_committed: bool,
) -> RemoteRead:
    """A consumer's fetch from the remote tier (see the module doc)."""
    state = _ready_state(rlm, partition)
    now_ms = int(time.monotonic() * 1000)
    if rlm.fetch_quota.throttle_time_ms(now_ms) > 0:
        return RemoteRead(b"", None)
    if rlm.reads_waiting >= rlm.settings.reader_max_pending:
        return RemoteRead(b"", None)
    cache = rlm.metadata.manager.cache(state.tip)
    if cache is None:
        raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"[{partition.name}] no remote metadata")
    epochs = state.log.leader_epoch_entries()
    rlm.reads_waiting += 1
    waiting = True
    try:
        async with asyncio.timeout(rlm.settings.fetch_max_wait_ms / 1000):
            async with rlm.reader_slots:
                rlm.reads_waiting -= 1
                waiting = False
                result = await remote_fetch.read(
                    rlm.storage,
                    rlm.indexes,
                    cache,
                    epochs,
                    fetch_offset,
                    max_bytes,
                    min_one_message=min_one,
                    read_committed=read_committed,
                )
    except TimeoutError:
        log.debug("[%s] remote read at %d timed out", partition.name, fetch_offset)
        return RemoteRead(b"", None)
    except RemoteStorageError as exc:
        log.info("[%s] remote read at %d failed: %s", partition.name, fetch_offset, exc)
        raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, str(exc)) from None
    finally:
        if waiting:
            rlm.reads_waiting -= 1
    if result.segment is None or result.records is None:
        raise KafkaError(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            f"[{partition.name}] no remote segment holds offset {fetch_offset}",
        )
    records = bytes(result.records.records)
    rlm.fetch_quota.record(len(records), int(time.monotonic() * 1000))
    aborted = result.aborted
    if read_committed and not result.aborted_complete:
        aborted = [
            *(aborted or []),
            *partition.log.collect_aborted_txns(
                partition.log.local_log_start_offset, partition.last_stable_offset
            ),
        ]
    return RemoteRead(records, aborted)


async def offset_for_timestamp(
    rlm: RemoteLogManager, partition: Partition, timestamp: int
) -> tuple[int, int, int | None] | None:
    """(offset, timestamp, leader epoch) of the first record at or after
    ``timestamp`` in the remote tier, or None: search the local log."""
    state = rlm.tiered(partition.topic, partition.index)
    if state is None or not state.ready:
        return None
    cache = rlm.metadata.manager.cache(state.tip)
    if cache is None:
        return None
    log_ = partition.log
    try:
        async with asyncio.timeout(rlm.settings.list_offsets_timeout_ms / 1000):
            found = await remote_fetch.find_offset_by_timestamp(
                rlm.storage,
                rlm.indexes,
                cache,
                state.log.leader_epoch_entries(),
                log_end_offset=log_.log_end_offset,
                local_log_start=log_.local_log_start_offset,
                timestamp=timestamp,
                starting_offset=log_.log_start_offset,
                max_record_body=log_.config.max_decompressed_message_bytes,
            )
    except TimeoutError:
        raise KafkaError(
            ErrorCode.REQUEST_TIMED_OUT, f"[{partition.name}] remote timestamp lookup timed out"
        ) from None
    except RemoteStorageError as exc:
        raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, str(exc)) from None
    if found is None:
        return None
    return found.offset, found.timestamp, found.leader_epoch


async def rebuild_follower(
    rlm: RemoteLogManager,
    partition: Partition,
    *,
    epoch_of_local_start: int,
    earlier_epoch_end: EpochEndOffset | None,
    leader_local_log_start: int,
    leader_log_start: int,
) -> int:
    """Kafka's ``buildRemoteLogAuxState``: restore the epochs and producers at
    the leader's local log start from the remote tier and start the local log
    there; returns the offset to fetch from."""
    state = rlm.tiered(partition.topic, partition.index)
    if state is None:
        raise KafkaError(
            ErrorCode.KAFKA_STORAGE_ERROR,
            f"[{partition.name}] not tiered here (yet): can not rebuild from the remote tier",
        )
    await asyncio.wait_for(
        asyncio.shield(state.loaded), rlm.settings.list_offsets_timeout_ms / 1000
    )
    cache = rlm.metadata.manager.cache(state.tip)
    if cache is None:
        raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"[{partition.name}] no remote metadata")
    epoch = follower_state.target_epoch(
        epoch_of_local_start, earlier_epoch_end, leader_local_log_start
    )
    aux = await follower_state.fetch_aux_state(cache, rlm.storage, epoch, leader_local_log_start)
    await partition.restore_from_remote(
        aux.next_offset, leader_log_start, aux.leader_epochs, aux.producer_snapshot
    )
    log.info(
        "[%s] rebuilt from remote segment %s: fetching from %d (log start %d)",
        partition.name,
        aux.segment.segment_id,
        aux.next_offset,
        leader_log_start,
    )
    return aux.next_offset
