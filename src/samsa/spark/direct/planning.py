"""Which offsets a Spark read takes straight from the object store: planned on the driver.

The ranges the brokers' offsets gave (one per partition) are cut, when the
options name the store and ``tieredReads`` is not ``broker``:

1. ListOffsets -4 (the first offset on the brokers' disks) and -5 (the last
   one in the remote tier) bound what may be read directly: offsets below the
   local log start with ``auto``, every remote offset with ``direct``.  A
   range above the bound (a topic that is not tiered, a stream at its tail)
   stays as it was, and nothing else is asked.
2. ``__remote_log_metadata`` gives the partition's remote segments
   (``catalog_reader``).
3. Each segment's share of a range below the bound becomes a ``DirectRange``;
   the rest -- the local tail, and offsets no finished segment holds -- stays
   an ``OffsetRange`` read through the brokers (``segment_pieces``).
4. read_committed: the records of aborted transactions must be dropped, as a
   broker's Fetch answer lists them.  A transaction is indexed in the segment
   of its ABORT marker, which may be a later remote segment or still the
   brokers' local log, so the driver reads the transaction index objects of
   the remote segments (only those the metadata says are not empty), asks the
   brokers for the rest with one read_committed fetch at the first offset it
   does not read directly (the answer lists every aborted transaction open
   there), and gives each direct range the transactions that touch it.  A
   transaction still open exactly there would make that fetch answer nothing:
   such a partition is read through the brokers.

With ``auto``, anything that keeps the driver from planning direct reads (a
broker without ListOffsets -4/-5, no metadata topic or no right to read it,
a store that does not answer) leaves the ranges to the brokers with a
warning; with ``direct`` it fails the query with the cause.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from samsa.client.admin import LATEST, Admin
from samsa.client.metadata import TopicPartition
from samsa.errors import SamsaError
from samsa.spark.direct.catalog_reader import NoRemoteMetadata, read_catalog
from samsa.spark.direct.options import StoreSettings
from samsa.spark.direct.partition import AbortedEntry, DirectRange
from samsa.spark.options import ReadOptions, SamsaSparkError
from samsa.spark.ranges import OffsetRange
from samsa.tiered.direct_read import aborted_transactions
from samsa.tiered.metadata.model import RemoteLogSegmentMetadata, TopicIdPartition
from samsa.tiered.segment_objects import RemoteStorageManager, SegmentFile, object_key
from samsa.tiered.store.settings import open_remote_store

__all__ = ["EARLIEST_LOCAL", "LATEST_TIERED", "plan_direct", "segment_pieces"]

log = logging.getLogger("samsa.spark")

EARLIEST_LOCAL, LATEST_TIERED = -4, -5
"""ListOffsets' first offset on local disk (KIP-405) and last tiered offset (KIP-1005)."""
DEFAULT_TIMEOUT_MS = 30_000


def plan_direct(options: ReadOptions, ranges: list[OffsetRange]) -> list[OffsetRange]:
    """``ranges`` with what may be read straight from the store cut out as ``DirectRange`` s."""
    tiered = options.tiered
    if tiered is None or not tiered.plans_direct_reads or not ranges:
        return ranges
    try:
        return _Planner(options).plan(ranges)
    except (SamsaError, NoRemoteMetadata) as exc:
        if tiered.mode == "direct":
            raise SamsaSparkError(
                f"tieredReads=direct: cannot plan reads from the object store: {exc}"
            ) from None
        log.warning("reading through the brokers only (tieredReads=auto): %s", exc)
        return ranges


def segment_pieces(
    whole: OffsetRange, segments: Sequence[RemoteLogSegmentMetadata], below: int
) -> list[OffsetRange]:
    """``whole`` cut into direct ranges, one per remote segment holding its
    offsets below ``below``, and broker ranges for the rest, in offset order.
    ``segments`` are sorted by start offset and never overlap (the catalog's)."""
    topic, partition = whole.topic, whole.partition
    out: list[OffsetRange] = []
    at, limit = whole.start, min(whole.end, below)
    for segment in segments:
        low, high = max(at, segment.start_offset), min(limit, segment.end_offset + 1)
        if high <= low:
            continue
        if low > at:
            out.append(OffsetRange(topic, partition, at, low))
        out.append(
            DirectRange(
                topic,
                partition,
                low,
                high,
                log_key=object_key(segment, SegmentFile.LOG),
                index_key=object_key(segment, SegmentFile.OFFSET_INDEX),
                segment_start=segment.start_offset,
                segment_end=segment.end_offset,
                segment_size=segment.segment_size_bytes,
            )
        )
        at = high
    if at < whole.end:
        out.append(OffsetRange(topic, partition, at, whole.end))
    return out


def _tp(r: OffsetRange) -> TopicPartition:
    return TopicPartition(r.topic, r.partition)


class _Planner:
    def __init__(self, options: ReadOptions) -> None:
        assert options.tiered is not None and options.tiered.store is not None
        self.mode = options.tiered.mode
        self.store: StoreSettings = options.tiered.store
        config: dict[str, Any] = {"request.timeout.ms": DEFAULT_TIMEOUT_MS}
        config.update(options.client_config)
        config["bootstrap.servers"] = options.bootstrap
        self.read_committed = config.pop("isolation.level", None) == "read_committed"
        config.pop("group.id", None)
        self.config = config

    def plan(self, ranges: list[OffsetRange]) -> list[OffsetRange]:
        with Admin(self.config) as admin:
            tps = sorted({_tp(r) for r in ranges}, key=lambda tp: (tp.topic, tp.partition))
            local = _offsets(admin, tps, EARLIEST_LOCAL)
            tiered_end = _offsets(admin, tps, LATEST_TIERED)
            bound = {
                tp: tiered_end[tp] + 1
                if self.mode == "direct"
                else min(local[tp], tiered_end[tp] + 1)
                for tp in tps
            }
            wanted = {_tp(r) for r in ranges if tiered_end[_tp(r)] >= 0 and r.start < bound[_tp(r)]}
            if not wanted:
                return ranges
            ids = self._topic_ids(admin, {tp.topic for tp in wanted})
            named = {tp: TopicIdPartition(ids[tp.topic], tp.topic, tp.partition) for tp in wanted}
            catalog = read_catalog(admin, self.config, named.values())
            ends = self._log_ends(admin, wanted) if self.read_committed else {}
            out: list[OffsetRange] = []
            for r in ranges:
                tp = _tp(r)
                if tp not in wanted:
                    out.append(r)
                    continue
                segments = catalog.segments(named[tp])
                pieces = segment_pieces(r, segments, bound[tp])
                if self.read_committed and any(isinstance(p, DirectRange) for p in pieces):
                    aborted = self._aborted(r, segments, bound[tp], ends[tp])
                    pieces = [r] if aborted is None else [_with_aborted(p, aborted) for p in pieces]
                out.extend(pieces)
        direct = sum(isinstance(p, DirectRange) for p in out)
        log.info("%d of %d Spark partitions read straight from the object store", direct, len(out))
        return out

    @staticmethod
    def _topic_ids(admin: Admin, topics: Iterable[str]) -> dict[str, bytes]:
        described = admin.describe_topics(sorted(topics))
        ids = {}
        for topic, description in described.items():
            if not description.topic_id or not any(description.topic_id):
                raise NoRemoteMetadata(f"the brokers gave no topic id for {topic}")
            ids[topic] = description.topic_id
        return ids

    @staticmethod
    def _log_ends(
        admin: Admin, tps: Iterable[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, int]]:
        """(high watermark, last stable offset) of each partition."""
        specs = dict.fromkeys(tps, LATEST)
        high = admin.list_offsets(specs)
        stable = admin.list_offsets(specs, isolation_level=1)
        return {tp: (high[tp][0], stable[tp][0]) for tp in specs}

    def _aborted(
        self,
        whole: OffsetRange,
        segments: Sequence[RemoteLogSegmentMetadata],
        bound: int,
        ends: tuple[int, int],
    ) -> list[AbortedEntry] | None:
        """The aborted transactions touching ``whole`` below ``bound`` (None: read
        the partition through the brokers, see the module doc)."""
        high_watermark, last_stable = ends
        local: list[AbortedEntry] = []
        if bound < high_watermark:
            if bound >= last_stable:
                log.info(
                    "%s-%d: a transaction is open at offset %d; read through the brokers",
                    whole.topic, whole.partition, bound,
                )  # fmt: skip
                return None
            local = self._open_at(whole.topic, whole.partition, bound)
        indexed = [
            s
            for s in segments
            if not s.txn_index_empty and s.end_offset >= whole.start and s.start_offset < bound
        ]
        remote = asyncio.run(_read_transaction_indexes(self.store, indexed)) if indexed else []
        known = {(pid, first) for pid, first, _ in remote}
        return remote + [e for e in local if (e[0], e[1]) not in known]

    def _open_at(self, topic: str, partition: int, offset: int) -> list[AbortedEntry]:
        """Aborted transactions that began before ``offset`` and whose marker is at
        or after it, as a read_committed fetch at ``offset`` lists them."""
        from samsa.client.arrow import PartitionRangeReader

        config = {**self.config, "isolation.level": "read_committed"}
        with PartitionRangeReader(config, topic, partition, offset, offset + 1) as reader:
            for _ in reader:
                pass
            listed = reader.aborted_transactions
        return [(pid, first, offset) for first, pid in sorted(listed) if first < offset]


def _offsets(admin: Admin, tps: list[TopicPartition], spec: int) -> dict[TopicPartition, int]:
    found = admin.list_offsets(dict.fromkeys(tps, spec))
    return {tp: found[tp][0] for tp in tps}


async def _read_transaction_indexes(
    store: StoreSettings, segments: list[RemoteLogSegmentMetadata]
) -> list[AbortedEntry]:
    manager = RemoteStorageManager(open_remote_store(store))
    try:
        found = await asyncio.gather(*(aborted_transactions(manager, s) for s in segments))
    finally:
        await manager.store.close()
    return [(t.producer_id, t.first_offset, t.last_offset) for entries in found for t in entries]


def _with_aborted(piece: OffsetRange, aborted: list[AbortedEntry]) -> OffsetRange:
    if not isinstance(piece, DirectRange):
        return piece
    touching = tuple(e for e in aborted if e[2] >= piece.start and e[1] < piece.end)
    return dataclasses.replace(piece, aborted=touching)
