"""DiskRaftLog on disk: Kafka's directory and file names, batch and snapshot
layouts that plain RecordBatch parsing reads, and reopening."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from samsa.protocol.batches.record_batch import iter_batches
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_records
from samsa.protocol.internal_records.kraft_control import (
    control_batch,
    decode_control_record,
    encode_control_record,
)
from samsa.raft.persistence.disk_log import DiskRaftLog
from samsa.raft.persistence.entry_codec import SKIPPED_CONTROL, voters_record
from samsa.raft.records import Endpoint, Entry, LeaderChange, SnapshotId, Voters
from samsa.raft.voters import VoterNode, VoterSet
from samsa.storage import CLUSTER_METADATA_TOPIC, Log, LogConfig

NOW_MS = 1_700_000_000_000
VOTERS = VoterSet(
    (
        VoterNode(1, uuid.UUID(int=7), (Endpoint("CONTROLLER", "c1", 9093),)),
        VoterNode(2, None, (Endpoint("CONTROLLER", "c2", 9093),)),
    )
)
SMALL_SEGMENTS = LogConfig(segment_bytes=600, retention_ms=-1, retention_bytes=-1)


def clock() -> int:
    return NOW_MS


def open_log(data_dir: Path, config: LogConfig | None = None) -> DiskRaftLog:
    if config is None:
        return DiskRaftLog.open(data_dir, clock=clock)
    return DiskRaftLog.open(data_dir, clock=clock, config=config)


def data_batches(*values: bytes) -> bytes:
    builder = RecordBatchBuilder()
    for value in values:
        builder.append(NOW_MS, None, value)
    return bytes(builder.build())


def segment_batches(directory: Path) -> list[tuple[Any, list[Any]]]:
    """Every batch of every segment, decoded by the plain protocol reader."""
    out = []
    for segment in sorted(directory.glob("*.log")):
        out += list(decode_records(segment.read_bytes(), skip_control=False))
    return out


def test_directory_and_file_names_are_kafkas(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.directory == tmp_path / "__cluster_metadata-0"
    log.append_as_leader([b"a", b"b"], 1)
    log.append_as_leader([b"c"], 3)
    log.create_snapshot(SnapshotId(2, 1), None, b"")
    log.close()
    assert sorted(p.name for p in log.directory.iterdir()) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "00000000000000000002-0000000001.checkpoint",
        "leader-epoch-checkpoint",
    ]
    # Kafka's LeaderEpochCheckpointFile: version, count, then "epoch start_offset" lines
    assert (log.directory / "leader-epoch-checkpoint").read_text() == "0\n2\n1 0\n3 2\n"


def test_entries_are_kafka_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([LeaderChange(1, (1, 2, 3), (1, 2))], 4)
    log.append_as_leader([b"r1", b"r2", b"r3"], 4)
    log.append_as_leader([Voters(VOTERS)], 4)
    log.append_as_follower([Entry(5, 4, b"f1"), Entry(6, 5, b"f2"), Entry(7, 5, b"f3")])
    log.close()

    batches = segment_batches(log.directory)
    layout = [(h.base_offset, h.partition_leader_epoch, h.is_control, len(rs)) for h, rs in batches]
    assert layout == [
        (0, 4, True, 1),
        (1, 4, False, 3),
        (4, 4, True, 1),
        (5, 4, False, 1),
        (6, 5, False, 2),
    ]
    data = [(r.offset, r.key, r.value) for h, rs in batches if not h.is_control for r in rs]
    assert data == [
        (1, None, b"r1"),
        (2, None, b"r2"),
        (3, None, b"r3"),
        (5, None, b"f1"),
        (6, None, b"f2"),
        (7, None, b"f3"),
    ]
    assert all(h.timestamp_type == 0 and h.producer_id == -1 for h, _ in batches)
    leader_change = batches[0][1][0]
    assert (leader_change.key, leader_change.value) == encode_control_record(
        "LEADER_CHANGE",
        {
            "leader_id": 1,
            "voters": [{"voter_id": 1}, {"voter_id": 2}, {"voter_id": 3}],
            "granting_voters": [{"voter_id": 1}, {"voter_id": 2}],
        },
    )
    voters = batches[2][1][0]
    kind, body = decode_control_record(voters.key, voters.value)
    assert kind == "KRAFT_VOTERS"
    assert body["voters"][0] == {
        "voter_id": 1,
        "voter_directory_id": uuid.UUID(int=7).bytes,
        "endpoints": [{"name": "CONTROLLER", "host": "c1", "port": 9093}],
        "kraft_version_feature": {"min_supported_version": 0, "max_supported_version": 1},
    }
    assert body["voters"][1]["voter_directory_id"] == bytes(16)  # Kafka's ZERO_UUID


def test_a_long_run_is_split_into_batches_of_at_most_8_kib(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"v" * 100 for _ in range(500)], 1)
    log.close()
    sizes = [
        h.size for _, h in iter_batches((log.directory / "00000000000000000000.log").read_bytes())
    ]
    assert len(sizes) > 5
    assert max(sizes) <= 8 * 1024


def test_reading_a_log_written_by_kafka(tmp_path: Path) -> None:
    """Kafka's leader writes KRaftVersion + Voters beside its LeaderChange when the
    voter set comes from the bootstrap snapshot; unknown types may come from newer
    Kafka.  Each still holds its offset."""
    directory = tmp_path / "__cluster_metadata-0"
    kafka = Log.open(directory, CLUSTER_METADATA_TOPIC, 0, LogConfig())
    start_of_epoch = control_batch(
        [
            ("LEADER_CHANGE", {"leader_id": 1, "voters": [{"voter_id": 1}], "granting_voters": []}),
            ("KRAFT_VERSION", {"kraft_version": 1}),
            ("KRAFT_VOTERS", voters_record(VOTERS)),
        ],
        timestamp_ms=NOW_MS,
        base_offset=0,
        partition_leader_epoch=2,
    )
    unknown = RecordBatchBuilder(base_offset=3, is_control=True, partition_leader_epoch=2)
    unknown.append(NOW_MS, b"\x00\x00\x00\x63", b"future")
    data = RecordBatchBuilder(base_offset=4, partition_leader_epoch=2)
    data.append(NOW_MS, None, b"record")
    kafka.append(bytearray(start_of_epoch) + unknown.build() + data.build(), assign_offsets=False)
    kafka.close()

    log = open_log(tmp_path)
    assert log.read(0, 10) == [
        Entry(0, 2, LeaderChange(1, (1,), ())),
        Entry(1, 2, SKIPPED_CONTROL),
        Entry(2, 2, Voters(VOTERS)),
        Entry(3, 2, SKIPPED_CONTROL),
        Entry(4, 2, b"record"),
    ]
    assert [e.offset for e in log.read(2, 2)] == [2, 3]
    log.truncate_to(2)  # inside the start-of-epoch batch: the records below stay
    assert log.read(0, 10) == [Entry(0, 2, LeaderChange(1, (1,), ())), Entry(1, 2, SKIPPED_CONTROL)]
    log.close()


def test_snapshot_file_layout_is_kafkas(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"a", b"b", b"c"], 3)
    data = data_batches(b"topic-record", b"partition-record") + data_batches(b"config-record")
    log.create_snapshot(SnapshotId(3, 3), VOTERS, data)
    log.close()

    raw = (log.directory / "00000000000000000003-0000000003.checkpoint").read_bytes()
    batches = list(decode_records(raw, skip_control=False))
    assert [h.is_control for h, _ in batches] == [True, False, False, True]
    assert all(h.partition_leader_epoch == 3 for h, _ in (batches[0], batches[-1]))
    header = [decode_control_record(r.key, r.value) for r in batches[0][1]]
    assert [kind for kind, _ in header] == ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS"]
    assert header[0][1]["last_contained_log_timestamp"] == NOW_MS
    assert header[1][1]["kraft_version"] == 1
    assert header[2][1] == {"version": 0, **voters_record(VOTERS)}
    assert [r.value for _, rs in batches[1:3] for r in rs] == [
        b"topic-record",
        b"partition-record",
        b"config-record",
    ]
    footer = batches[-1][1]
    assert [decode_control_record(r.key, r.value)[0] for r in footer] == ["SNAPSHOT_FOOTER"]
    assert batches[-1][0].base_offset == 3  # after the header's records (0, 1, 2)
    assert raw[len(raw) - len(data) - batches[-1][0].size : -batches[-1][0].size] == data


def test_a_snapshot_without_voters_is_kraft_version_0(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.create_snapshot(SnapshotId(0, 0), None, b"")
    log.close()
    raw = (log.directory / "00000000000000000000-0000000000.checkpoint").read_bytes()
    batches = list(decode_records(raw, skip_control=False))
    kinds = [[decode_control_record(r.key, r.value)[0] for r in rs] for _, rs in batches]
    assert kinds == [["SNAPSHOT_HEADER"], ["SNAPSHOT_FOOTER"]]


def test_snapshot_data_must_be_data_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for bad in (
        b"opaque",
        data_batches(b"x")[:-1],
        control_batch([("SNAPSHOT_FOOTER", {})], timestamp_ms=0),
    ):
        with pytest.raises(ValueError):
            log.create_snapshot(SnapshotId(0, 0), None, bad)
    assert log.latest_snapshot_id is None
    assert [p.name for p in log.directory.glob("*.checkpoint*")] == []
    log.close()


def test_reopen_after_close_keeps_everything(tmp_path: Path) -> None:
    log = open_log(tmp_path, SMALL_SEGMENTS)
    log.append_as_leader([LeaderChange(1, (1, 2))], 1)
    log.append_as_leader([b"entry-%d" % i + b"." * 30 for i in range(40)], 1)
    log.append_as_leader([Voters(VOTERS), b"after"], 2)
    log.create_snapshot(SnapshotId(20, 1), VOTERS, data_batches(b"image"))
    log.create_snapshot(SnapshotId(30, 1), None, b"")
    log.delete_before_snapshot(SnapshotId(20, 1))
    log.append_as_leader([b"tail"], 3)
    before = (
        log.read(20, 1_000),
        log.start_offset,
        log.end_offset,
        log.last_fetched_epoch,
        log.latest_snapshot_id,
        log.earliest_snapshot_id,
        [log.end_offset_for_epoch(e) for e in range(5)],
        log.load_snapshot(SnapshotId(20, 1)),
    )
    assert len(list(log.directory.glob("*.log"))) > 1
    log.close()

    reopened = open_log(tmp_path, SMALL_SEGMENTS)
    after = (
        reopened.read(20, 1_000),
        reopened.start_offset,
        reopened.end_offset,
        reopened.last_fetched_epoch,
        reopened.latest_snapshot_id,
        reopened.earliest_snapshot_id,
        [reopened.end_offset_for_epoch(e) for e in range(5)],
        reopened.load_snapshot(SnapshotId(20, 1)),
    )
    assert after == before
    assert reopened.flushed_end_offset == reopened.end_offset
    reopened.close()


def test_delete_before_snapshot_deletes_whole_segments_below_it(tmp_path: Path) -> None:
    log = open_log(tmp_path, SMALL_SEGMENTS)
    for i in range(60):
        log.append_as_leader([b"entry-%02d" % i + b"." * 40], 1)
    segments_before = sorted(p.name for p in log.directory.glob("*.log"))
    log.create_snapshot(SnapshotId(35, 1), None, b"")
    log.delete_before_snapshot(SnapshotId(35, 1))
    segments_after = sorted(p.name for p in log.directory.glob("*.log"))
    bases = [int(name[:20]) for name in segments_after]
    assert len(segments_after) < len(segments_before)
    assert bases[0] <= 35 < (bases[1] if len(bases) > 1 else 10**9)
    assert log.start_offset == 35
    assert log.read(35, 1)[0].payload == b"entry-35" + b"." * 40
    log.close()


def test_a_reopened_log_starts_at_its_earliest_snapshot(tmp_path: Path) -> None:
    """The log start offset is not checkpointed (as in Kafka) and the first
    segment may begin below the snapshot: the log starts at the snapshot again."""
    log = open_log(tmp_path)
    log.append_as_leader([b"%d" % i for i in range(10)], 1)
    log.create_snapshot(SnapshotId(6, 1), None, b"")
    log.close()
    reopened = open_log(tmp_path)
    assert (reopened.start_offset, reopened.earliest_snapshot_id) == (6, SnapshotId(6, 1))
    assert [e.offset for e in reopened.read(6, 10)] == [6, 7, 8, 9]
    reopened.close()


def test_a_read_on_batch_bounds_carries_the_stored_batches_to_send_as_they_are(
    tmp_path: Path,
) -> None:
    from samsa.raft.persistence.entry_codec import decode_entries

    raft_log = open_log(tmp_path)
    raft_log.append_as_leader([b"a", b"b", b"c"], epoch=1)  # one batch: 0-2
    raft_log.append_as_leader([b"d", b"e"], epoch=2)  # another: 3-4
    try:
        whole = raft_log.read(0, 100)
        raw = getattr(whole, "raw", None)
        assert raw is not None
        assert decode_entries(raw, 0)[0] == list(whole)
        assert [e.payload for e in whole] == [b"a", b"b", b"c", b"d", b"e"]

        first_batch = raft_log.read(0, 3)
        assert first_batch.raw is not None  # type: ignore[attr-defined]
        assert decode_entries(first_batch.raw, 0)[0] == list(first_batch)  # type: ignore[attr-defined]
        from_second = raft_log.read(3, 100)
        assert decode_entries(from_second.raw, 3)[0] == list(from_second)  # type: ignore[attr-defined]

        # Starting or stopping inside a batch: the entries only (the sender encodes them).
        assert raft_log.read(1, 100).raw is None  # type: ignore[attr-defined]
        assert raft_log.read(0, 2).raw is None  # type: ignore[attr-defined]
    finally:
        raft_log.close()


def test_decoding_stops_at_the_first_batch_past_what_was_asked() -> None:
    """A read's bytes hold about twice the entries it asks for; the batches past
    them are left undecoded (a step of the metadata loader wants 200)."""
    from samsa.raft.persistence.entry_codec import decode_entries, encode_payloads

    data = bytes(
        encode_payloads(
            [b"x" * 50] * 1000, base_offset=0, epoch=1, timestamp_ms=NOW_MS, max_batch_bytes=1024
        )
    )
    batches = sum(1 for _ in iter_batches(data))
    assert batches > 10
    everything, end = decode_entries(data)
    assert len(everything) == 1000 and end == 1000
    some, next_offset = decode_entries(data, 0, until_offset=30)
    assert [e.offset for e in some] == list(range(next_offset))
    assert 30 <= next_offset < 30 + 1000 // batches + 1
    later, _ = decode_entries(data, next_offset, until_offset=next_offset + 1)
    assert later[0].offset == next_offset
