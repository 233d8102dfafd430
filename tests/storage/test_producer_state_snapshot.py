"""Producer state snapshots: Kafka's file format, recovery via load + replay, truncation."""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest

from samsa.storage.producers.entry import ProducerStateEntry
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.snapshot import (
    CorruptSnapshotError,
    decode_snapshot,
    encode_snapshot,
    snapshot_path,
)

from .test_producer_state import FakeLog


def state(psm: ProducerStateManager) -> dict[int, ProducerStateEntry]:
    return dict(psm.active_producers())


def test_snapshot_bytes_follow_kafkas_schema() -> None:
    entry = ProducerStateEntry(producer_id=7, producer_epoch=2, coordinator_epoch=-1)
    entry.add_batch(2, last_seq=9, last_offset=109, offset_delta=4, timestamp=1234)
    data = encode_snapshot([entry])
    version, crc, count = struct.unpack_from(">hIi", data)
    assert (version, count) == (1, 1)
    assert crc == crc32c.crc32c(data[6:])
    fields = struct.unpack_from(">qhiqiqiq", data, 10)
    assert fields == (7, 2, 9, 109, 4, 1234, -1, -1)
    assert len(data) == 10 + 46


def test_snapshot_file_name_is_twenty_digit_offset(tmp_path: Path) -> None:
    assert snapshot_path(tmp_path, 42).name == "00000000000000000042.snapshot"


def test_decode_rejects_damage() -> None:
    entry = ProducerStateEntry(producer_id=1, producer_epoch=0)
    entry.add_batch(0, 0, 0, 0, 0)
    data = bytearray(encode_snapshot([entry]))
    data[-1] ^= 0xFF
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(bytes(data))
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(encode_snapshot([entry])[:-3])
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(b"\x00\x02" + encode_snapshot([entry])[2:])


def test_snapshot_round_trip(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path)
    log = FakeLog(psm)
    log.produce(0, 3, pid=1, epoch=0, ts=10)
    log.produce(0, 2, pid=2, epoch=4, ts=20)
    log.produce(3, 1, pid=1, epoch=0, ts=30)
    psm.take_snapshot(log.next_offset)

    fresh = ProducerStateManager(tmp_path)
    assert fresh.load(0, log.next_offset) == log.next_offset
    assert fresh.map_end_offset == log.next_offset
    for pid in (1, 2):
        live, loaded = psm.last_entry(pid), fresh.last_entry(pid)
        assert live is not None and loaded is not None
        assert loaded.producer_epoch == live.producer_epoch
        assert loaded.last_timestamp == live.last_timestamp
        assert list(loaded.batches) == [live.batches[-1]]  # only the newest batch is stored
    # The loaded state still detects a retry of the newest batch and accepts the next one.
    dup = fresh.check(1, 0, 3, 3)
    assert dup.is_duplicate and dup.first_offset == 5
    assert not fresh.check(1, 0, 4, 4).is_duplicate


def test_only_the_latest_two_snapshots_are_kept(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path)
    log = FakeLog(psm)
    for _ in range(4):
        log.produce(len(log.batches), 1)
        psm.take_snapshot(log.next_offset)
    assert psm.snapshot_offsets() == [3, 4]
    assert not list(tmp_path.glob("*.tmp"))


def test_corrupted_snapshot_falls_back_to_older_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    psm = ProducerStateManager(tmp_path)
    log = FakeLog(psm)
    log.produce(0, 2)
    psm.take_snapshot(log.next_offset)
    log.produce(2, 2)
    newest = psm.take_snapshot(log.next_offset)
    raw = bytearray(newest.read_bytes())
    raw[12] ^= 0x01
    newest.write_bytes(bytes(raw))

    fresh = ProducerStateManager(tmp_path)
    with caplog.at_level("WARNING"):
        replay_from = fresh.load(0, log.next_offset)
    assert replay_from == 2
    assert "ignoring producer state snapshot" in caplog.text
    assert not newest.exists()
    log.replay_into(fresh, replay_from)
    assert fresh.check(1000, 0, 4, 4).outcome is psm.check(1000, 0, 4, 4).outcome
    assert fresh.check(1000, 0, 2, 3).first_offset == 2


def test_load_without_snapshots_replays_from_log_start(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path)
    assert psm.load(5, 9) == 5
    assert psm.map_end_offset == 5
    assert not psm.active_producers()


def test_load_plus_replay_rebuilds_the_live_state(tmp_path: Path) -> None:
    live = ProducerStateManager(tmp_path)
    log = FakeLog(live)
    for seq in range(0, 8, 2):
        log.produce(seq, 2, pid=1, ts=seq)
    log.produce(0, 1, pid=2, epoch=3, ts=50)
    live.take_snapshot(log.next_offset)
    # After the snapshot: enough batches per producer to refill the 5-batch window,
    # an epoch bump for producer 2 and a batch without producer id.
    for seq in range(8, 20, 2):
        log.produce(seq, 2, pid=1, ts=seq)
    log.produce(1, 1, pid=2, epoch=3, ts=60)
    log.produce(0, 3, pid=2, epoch=4, ts=70)
    for batch in range(5):
        log.produce(3 + batch, 1, pid=2, epoch=4, ts=80 + batch)

    recovered = ProducerStateManager(tmp_path)
    replay_from = recovered.load(0, log.next_offset)
    assert replay_from == 9
    log.replay_into(recovered, replay_from)
    recovered.replay_batch(-1, -1, -1, 0, log.next_offset, log.next_offset, 0, False, False)
    assert state(recovered) == state(live)
    assert recovered.map_end_offset == log.next_offset + 1


def test_replay_header_accepts_batch_header_shaped_objects(tmp_path: Path) -> None:
    class Header:
        base_offset = 10
        last_offset_delta = 2
        producer_id = 5
        producer_epoch = 1
        base_sequence = 4
        max_timestamp = 99
        is_transactional = False
        is_control = False

    psm = ProducerStateManager(tmp_path)
    psm.replay_header(Header())
    entry = psm.last_entry(5)
    assert entry is not None
    assert (entry.first_seq, entry.last_seq, entry.last_data_offset) == (4, 6, 12)
    assert psm.map_end_offset == 13


def test_truncation_drops_later_snapshots_and_state(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path, snapshots_to_keep=3)
    log = FakeLog(psm)
    log.produce(0, 2)
    psm.take_snapshot(2)
    log.produce(2, 2)
    psm.take_snapshot(4)
    log.produce(4, 2)
    psm.take_snapshot(6)
    log.produce(6, 2)

    replay_from = psm.truncate_to(5)
    assert psm.snapshot_offsets() == [2, 4]
    assert replay_from == 4
    log.batches = [b for b in log.batches if b[4] < 5]
    log.replay_into(psm, replay_from)
    # Batch 4..5 (seq 4..5) survived; later sequences are forgotten.
    assert psm.check(1000, 0, 4, 5).is_duplicate
    assert not psm.check(1000, 0, 6, 6).is_duplicate
    assert psm.map_end_offset == 6


def test_truncation_past_the_state_keeps_it(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path)
    log = FakeLog(psm)
    log.produce(0, 2)
    psm.take_snapshot(2)
    assert psm.truncate_to(10) == 10
    assert psm.last_entry(1000) is not None


def test_delete_snapshots_after_and_before(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path, snapshots_to_keep=5)
    for offset in (1, 2, 3, 4):
        psm.take_snapshot(offset)
    psm.delete_snapshots_after(3)
    psm.delete_snapshots_before(2)
    assert psm.snapshot_offsets() == [2, 3]


def test_load_discards_out_of_range_snapshots_and_stray_tmp_files(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path, snapshots_to_keep=5)
    for offset in (1, 5, 9):
        psm.take_snapshot(offset)
    (tmp_path / "00000000000000000007.snapshot.tmp").write_bytes(b"half")
    assert ProducerStateManager(tmp_path).load(3, 8) == 5
    assert psm.snapshot_offsets() == [5]
    assert not list(tmp_path.glob("*.tmp"))


def test_take_snapshot_refuses_an_offset_behind_the_state(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path)
    FakeLog(psm).produce(0, 3)
    with pytest.raises(ValueError):
        psm.take_snapshot(2)


def test_load_drops_expired_producers(tmp_path: Path) -> None:
    psm = ProducerStateManager(tmp_path)
    log = FakeLog(psm)
    log.produce(0, 1, pid=1, ts=0)
    log.produce(0, 1, pid=2, ts=9_000)
    psm.take_snapshot(log.next_offset)
    fresh = ProducerStateManager(tmp_path)
    fresh.load(0, log.next_offset, now_ms=10_000, producer_id_expiration_ms=5_000)
    assert set(fresh.active_producers()) == {2}
