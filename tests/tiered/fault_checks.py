"""What the tiered fault tests check after every fault, shared by the loopback and the network runs.

A fault run (``tests.cluster.fault_run``) keeps two idempotent acks=all
producers and a reader busy on a tiered topic while faults come and go.
After each fault, with the producers still running, ``check_now`` proves:

* nothing acknowledged is lost, duplicated or reordered, and nothing a reader
  saw was later truncated: the checker of the cluster suites
  (``tests.cluster.checker``) over every acknowledgement so far and every
  partition read from offset 0 (most of it from the remote tier);
* no reader ever saw a gap: the log read from offset 0 holds every offset
  up to its end, and the reader that ran all along saw each offset once, in
  order (no transactions here, so every offset is a record);
* the remote metadata and the bucket agree (``remote_problems``): every
  finished segment has its objects, no object lies outside a segment the
  metadata knows, no copy is left dangling, no deletion is half done, and
  the readable remote segments follow one another from the log start
  without a gap.

``Figures`` collects the counts per fault for the report.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.cluster.checker import Ack, Seen, check
from tests.cluster.fault_run import PARTITIONS, TOPIC, Run
from tests.cluster.workload import end_offsets, read_final_log
from tests.tiered.broker_tiering import metadata_events, metadata_values

from samsa.testing.cluster import call, wait_until
from samsa.testing.object_store import S3Server
from samsa.tiered.catalog import RemoteCatalog
from samsa.tiered.metadata import (
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
)
from samsa.tiered.segment_objects import missing_objects, orphan_keys, partition_prefix
from samsa.tiered.store.s3 import S3RemoteStore, S3Settings

S = RemoteLogSegmentState
LATEST_TIERED, EARLIEST_LOCAL = -5, -4
METADATA_PARTITIONS = 3
KEY_PREFIX = "tiered/"


@dataclass
class FaultFigures:
    fault: str
    acknowledged: int = 0
    lost: int = 0
    duplicates: int = 0
    reordered: int = 0
    phantom_reads: int = 0
    log_gaps: int = 0
    reader_gaps: int = 0
    reader_repeats: int = 0
    remote_segments: int = 0
    remote_problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.fault}: acknowledged {self.acknowledged}, lost {self.lost}, "
            f"duplicates {self.duplicates}, reordered {self.reordered}, "
            f"phantom reads {self.phantom_reads}, gaps {self.log_gaps} in the log / "
            f"{self.reader_gaps} seen by the reader (repeats {self.reader_repeats}), "
            f"remote segments {self.remote_segments}, remote problems {len(self.remote_problems)}"
        )


def s3_settings(server: S3Server, bucket: str, endpoint: str) -> dict[str, str]:
    """The brokers' ``rsm.config.*`` for ``bucket``, reached at ``endpoint``
    (the fault proxy in front of the server)."""
    return {
        "rsm.config.storage.backend.class": "s3",
        "rsm.config.storage.s3.bucket.name": bucket,
        "rsm.config.storage.s3.endpoint.url": endpoint,
        "rsm.config.storage.s3.path.style.access.enabled": "true",
        "rsm.config.storage.s3.bulk.delete.enabled": "false",
        "rsm.config.storage.aws.access.key.id": server.access_key,
        "rsm.config.storage.aws.secret.access.key": server.secret_key,
        "rsm.config.key.prefix": KEY_PREFIX,
        # A paused store holds a request at most this long (then it is retried).
        "rsm.config.storage.s3.api.call.timeout": "5000",
    }


def bucket_store(server: S3Server, bucket: str) -> S3RemoteStore:
    """The test's own client of the bucket, straight to the server (never
    through the fault proxy), with the brokers' key prefix."""
    return S3RemoteStore(
        S3Settings(
            bucket,
            endpoint=server.endpoint,
            access_key_id=server.access_key,
            secret_access_key=server.secret_key,
            path_style=True,
            prefix=KEY_PREFIX,
        )
    )


# -- the remote tier against the bucket -------------------------------------------------
def remote_problems(bootstrap: str, store: S3RemoteStore, topic: str = TOPIC) -> list[str]:
    """Where the remote metadata of ``topic`` and the bucket disagree (empty: they agree)."""
    catalog = RemoteCatalog([topic])
    for value in metadata_values(bootstrap, METADATA_PARTITIONS):
        catalog.apply(value)
    problems: list[str] = []
    for tip in catalog.partitions(topic):
        name = f"{topic}-{tip.partition}"
        known = catalog.all_segments(tip)
        objects = asyncio.run(store.list_objects(partition_prefix(tip)))
        finished = [s for s in known if s.state is S.COPY_SEGMENT_FINISHED]
        highest = max((s.end_offset for s in finished), default=-1)
        for segment in known:
            if segment.state is S.DELETE_SEGMENT_STARTED:
                problems.append(f"{name}: deletion of {segment.segment_id} not finished")
            elif segment.state is S.COPY_SEGMENT_STARTED and segment.end_offset <= highest:
                problems.append(
                    f"{name}: dangling copy {segment.segment_id} of offsets "
                    f"{segment.start_offset}-{segment.end_offset} (broker {segment.broker_id})"
                )
        for segment_id, kinds in missing_objects(finished, objects).items():
            problems.append(f"{name}: finished segment {segment_id} lacks {kinds}")
        orphans = orphan_keys(objects, [s.segment_id.id for s in known])
        if orphans:
            problems.append(f"{name}: {len(orphans)} objects no metadata names: {orphans[:3]}")
        readable = catalog.segments(tip)
        for before, after in itertools.pairwise(readable):
            if after.start_offset != before.end_offset + 1:
                problems.append(
                    f"{name}: remote tier jumps from {before.end_offset} to {after.start_offset}"
                )
    return problems


def segment_histories(bootstrap: str, partition: int, topic: str = TOPIC) -> dict[bytes, list[str]]:
    """Each remote segment of ``topic``-``partition`` ever announced, by id:
    "STARTED by <broker> at <start offset>", then every state it went through,
    in the order ``__remote_log_metadata`` holds them."""
    histories: dict[bytes, list[str]] = {}
    for event in metadata_events(bootstrap, METADATA_PARTITIONS):
        segment_id = getattr(event, "segment_id", None)
        if segment_id is None:
            continue
        tip = segment_id.topic_id_partition
        if (tip.topic, tip.partition) != (topic, partition):
            continue
        if isinstance(event, RemoteLogSegmentMetadataUpdate):
            histories.setdefault(segment_id.id, []).append(event.state.name)
        elif isinstance(event, RemoteLogSegmentMetadata):
            histories.setdefault(segment_id.id, []).append(
                f"STARTED by {event.broker_id} at {event.start_offset}"
            )
    return histories


def remote_segment_count(bootstrap: str, topic: str = TOPIC) -> int:
    catalog = RemoteCatalog([topic])
    for value in metadata_values(bootstrap, METADATA_PARTITIONS):
        catalog.apply(value)
    return sum(len(catalog.segments(tip)) for tip in catalog.partitions(topic))


def wait_remote_consistent(
    bootstrap: str, store: S3RemoteStore, what: str, timeout: float = 60, topic: str = TOPIC
) -> None:
    """Until the metadata and the bucket agree (dangling copies are cleaned
    after the brokers' orphan grace, deletions retried every task interval)."""
    last: list[str] = []

    def agree() -> bool:
        nonlocal last
        last = remote_problems(bootstrap, store, topic)
        return not last

    try:
        wait_until(agree, timeout, f"the remote metadata and the bucket to agree ({what})")
    except TimeoutError as exc:
        raise AssertionError("\n".join([str(exc), *last[:10]])) from None


# -- what the leaders show --------------------------------------------------------------
def tiered_end(run: Run, partition: int) -> int:
    """ListOffsets -5 of ``partition`` at its leader (-1: nothing tiered)."""
    return _leader_offset(run, partition, LATEST_TIERED)


def earliest_local(run: Run, partition: int) -> int:
    """ListOffsets -4 of ``partition`` at its leader: its first offset on local disk."""
    return _leader_offset(run, partition, EARLIEST_LOCAL)


def _leader_offset(run: Run, partition: int, timestamp: int) -> int:
    view = run.agreed_view()
    assert view is not None
    leader = view[partition].leader
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {
                "name": TOPIC,
                "partitions": [
                    {
                        "partition_index": partition,
                        "current_leader_epoch": -1,
                        "timestamp": timestamp,
                    }
                ],
            }
        ],
    }
    entry = call(run.cluster.client_address(leader), 2, 9, body)["topics"][0]["partitions"][0]
    assert entry["error_code"] == 0, entry
    return int(entry["offset"])


def local_segment_count(run: Run, node: int, partition: int) -> int:
    directory = run.cluster.nodes[node].data_dir / f"{TOPIC}-{partition}"
    return len(list(directory.glob("*.log")))


def leaders_local_segments(run: Run) -> dict[int, int]:
    view = run.agreed_view()
    assert view is not None
    return {p: local_segment_count(run, v.leader, p) for p, v in view.items()}


def wait_copied_up_to(run: Run, marks: dict[int, int], what: str, timeout: float = 90) -> None:
    """Until each partition's leader tiered at least up to ``marks[p]``."""
    wait_until(
        lambda: all(tiered_end(run, p) >= mark for p, mark in marks.items()),
        timeout,
        f"the copies to reach {marks} ({what})",
    )


def end_marks(run: Run) -> dict[int, int]:
    """Each partition's high watermark minus what its active segment may hold:
    a tiered end every caught-up leader passes soon (segments roll every few
    kilobytes)."""
    ends = end_offsets(run.bootstrap, TOPIC, PARTITIONS)
    return {p: max(-1, end - 400) for p, end in ends.items()}


# -- the records ------------------------------------------------------------------------
def _gaps(offsets: Iterable[int]) -> tuple[int, int]:
    """(missing offsets between the first and the last, repeated offsets) of
    offsets in the order they were seen, which must run 0, 1, 2, ..."""
    missing = repeats = 0
    expected = 0
    for offset in offsets:
        if offset < expected:
            repeats += 1
            continue
        missing += offset - expected
        expected = offset + 1
    return missing, repeats


def check_now(run: Run, fault: str, store: S3RemoteStore) -> FaultFigures:
    """The checks of the module doc, with the producers still running."""
    acks: list[Ack] = []
    for producer in run.producers:
        with producer.lock:
            acks.extend(producer.acks)
    final = read_final_log(run.bootstrap, TOPIC, PARTITIONS)
    reader = run.reader
    assert reader is not None
    with reader.lock:
        seen_all: list[Seen] = list(reader.seen)
    ends = {p: (records[-1][0] + 1 if records else 0) for p, records in final.items()}
    seen = [s for s in seen_all if s.offset < ends[s.partition]]
    report = check(acks, final, seen)
    figures = FaultFigures(fault, acknowledged=report.acknowledged)
    figures.lost = len(report.lost)
    figures.duplicates = len(report.duplicates)
    figures.reordered = len(report.reordered)
    figures.phantom_reads = len(report.phantom_reads)
    for _partition, records in final.items():
        missing, _ = _gaps(offset for offset, _ in records)
        figures.log_gaps += missing + (records[0][0] if records else 0)
    by_partition: defaultdict[int, list[int]] = defaultdict(list)
    for s in seen_all:
        by_partition[s.partition].append(s.offset)
    for offsets in by_partition.values():
        missing, repeats = _gaps(offsets)
        figures.reader_gaps += missing + (offsets[0] if offsets else 0)
        figures.reader_repeats += repeats
    wait_remote_consistent(run.bootstrap, store, fault)
    figures.remote_segments = remote_segment_count(run.bootstrap)
    print(figures.line())
    assert report.ok, "\n".join(report.problems())
    assert report.acknowledged > 0 and report.reads_checked > 0
    assert (figures.log_gaps, figures.reader_gaps, figures.reader_repeats) == (0, 0, 0), (
        figures.line()
    )
    return figures


def fetch_at(run: Run, partition: int, offset: int, max_wait_ms: int = 100) -> dict[str, Any]:
    """A consumer's Fetch v12 of one partition at ``offset``, asked of its
    leader directly: its error code and records (bytes) as that node answers."""
    view = run.agreed_view()
    assert view is not None
    body = {
        "cluster_id": None,
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": TOPIC,
                "partitions": [
                    {
                        "partition": partition,
                        "current_leader_epoch": -1,
                        "fetch_offset": offset,
                        "last_fetched_epoch": -1,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    address = run.cluster.client_address(view[partition].leader)
    answer = call(address, 1, 12, body, timeout=30)
    entry = answer["responses"][0]["partitions"][0]
    return {"error_code": entry["error_code"], "records": bytes(entry.get("records") or b"")}


def timed(what: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    result = what()
    return result, time.monotonic() - started
