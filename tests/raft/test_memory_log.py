"""MemoryRaftLog, the voter history and the quorum config."""

from __future__ import annotations

import pytest

from samsa.errors import ConfigError
from samsa.raft import MemoryRaftLog, OffsetAndEpoch, QuorumConfig, VoterSet
from samsa.raft.voters import VoterSetHistory


def epochs_log() -> MemoryRaftLog:
    log = MemoryRaftLog()
    log.append_as_leader([b"a"] * 3, 1)  # [0, 3)
    log.append_as_leader([b"b"] * 2, 3)  # [3, 5)
    log.append_as_leader([b"c"] * 1, 4)  # [5, 6)
    return log


def test_end_offset_for_epoch_follows_kafkas_epoch_cache() -> None:
    log = epochs_log()
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(6, 4)
    assert log.end_offset_for_epoch(9) == OffsetAndEpoch(6, 4)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(5, 3)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(3, 1)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(3, 1)
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)


def test_the_start_snapshot_counts_as_the_first_epoch() -> None:
    log = epochs_log()
    log.create_snapshot(OffsetAndEpoch(4, 3), None, b"s")
    log.delete_before_snapshot(OffsetAndEpoch(4, 3))
    assert (log.start_offset, log.earliest_snapshot_id) == (4, OffsetAndEpoch(4, 3))
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(5, 3)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(4, 2)  # nothing <= 2 is known
    log.truncate_to(4)
    assert log.last_fetched_epoch == 3 and log.end_offset_for_epoch(3) == OffsetAndEpoch(4, 3)


def test_crash_keeps_only_flushed_entries() -> None:
    log = epochs_log()
    log.flush(4)
    assert log.flushed_end_offset == 4
    log.crash()
    assert log.end_offset == 4 and log.last_fetched_epoch == 3
    log.append_as_leader([b"d"], 5)
    log.crash(lose_unflushed=False)
    assert log.end_offset == 5 and log.flushed_end_offset == 5


def test_truncation_lowers_the_flushed_offset() -> None:
    log = epochs_log()
    log.flush(6)
    log.truncate_to(2)
    assert (log.end_offset, log.flushed_end_offset, log.last_fetched_epoch) == (2, 2, 1)
    with pytest.raises(ValueError):
        log.append_as_follower(log.read(0, 1))


def test_snapshots_travel_as_chunks_and_install() -> None:
    leader = epochs_log()
    snapshot_id = OffsetAndEpoch(5, 3)
    leader.create_snapshot(snapshot_id, VoterSet.of((1, 2)), b"state" * 20)
    chunks = []
    position = 0
    while True:
        chunk = leader.read_snapshot(snapshot_id, position, 16)
        assert chunk is not None
        chunks.append(chunk.data)
        position += len(chunk.data)
        if position >= chunk.size:
            break
    follower = MemoryRaftLog()
    follower.append_as_leader([b"x"], 1)
    follower.install_snapshot(snapshot_id, b"".join(chunks))
    assert (follower.start_offset, follower.end_offset, follower.last_fetched_epoch) == (5, 5, 3)
    loaded = follower.load_snapshot(snapshot_id)
    assert (
        loaded is not None and loaded.voters == VoterSet.of((1, 2)) and loaded.data == b"state" * 20
    )
    assert leader.read_snapshot(OffsetAndEpoch(1, 1), 0, 10) is None
    with pytest.raises(ValueError):
        follower.install_snapshot(OffsetAndEpoch(9, 9), b"not a snapshot")


def test_read_respects_limits_but_returns_at_least_one_entry() -> None:
    log = epochs_log()
    assert len(log.read(0, 2)) == 2
    assert len(log.read(0, 100, max_bytes=1)) == 1
    assert log.read(6, 10) == []


def test_voter_history_reverts_with_truncation() -> None:
    history = VoterSetHistory(VoterSet.of((1, 2, 3)))
    history.add(5, VoterSet.of((1, 2, 3, 4)))
    history.add(9, VoterSet.of((1, 2, 4)))
    assert history.latest() == VoterSet.of((1, 2, 4)) and history.latest_offset() == 9
    assert history.at_offset(7) == VoterSet.of((1, 2, 3, 4)) and history.at_offset(
        4
    ) == VoterSet.of((1, 2, 3))
    history.truncate_new_entries(9)
    assert history.latest() == VoterSet.of((1, 2, 3, 4))
    history.truncate_old_entries(6)
    assert history.base == VoterSet.of((1, 2, 3, 4)) and history.latest_offset() is None


def test_voter_set_basics() -> None:
    voters = VoterSet.of((3, 1, 2))
    assert voters.ids == (1, 2, 3) and voters.majority == 2
    assert voters.with_voter(VoterSet.of((4,)).nodes[0]).majority == 3
    assert voters.without_voter(3).ids == (1, 2)
    with pytest.raises(ValueError):
        voters.with_voter(voters.nodes[0])


def test_quorum_config_reads_kafka_properties() -> None:
    config = QuorumConfig.from_properties(
        {
            "controller.quorum.election.timeout.ms": "1500",
            "controller.quorum.fetch.timeout.ms": "3000",
            "controller.quorum.voters": "1@localhost:9093,2@[::1]:9094",
            "controller.quorum.bootstrap.servers": "a:1, b:2",
        }
    )
    assert (config.election_timeout_ms, config.fetch_timeout_ms, config.retry_backoff_ms) == (
        1500,
        3000,
        20,
    )
    assert config.static_voters is not None and config.static_voters.ids == (1, 2)
    assert config.static_voters.get(2).endpoints[0].host == "::1"
    assert config.bootstrap_servers == ("a:1", "b:2")
    assert config.check_quorum_timeout_ms == 4500
    with pytest.raises(ConfigError):
        QuorumConfig.from_properties({"controller.quorum.voters": "one@host"})
    with pytest.raises(ConfigError):
        QuorumConfig(election_timeout_ms=-1)


def test_recovery_starts_a_log_left_behind_its_snapshot_at_the_snapshot() -> None:
    log = epochs_log()
    log.flush(3)
    log.create_snapshot(OffsetAndEpoch(5, 3), None, b"s")  # durable at once
    log.crash()  # the entries [3, 6) were not flushed
    assert (log.start_offset, log.end_offset, log.last_fetched_epoch) == (5, 5, 3)


def test_a_machine_refuses_a_log_behind_its_snapshot() -> None:
    from tests.raft.helpers import make_machine

    from samsa.raft import RaftInvariantError
    from samsa.raft.persistence.memory_log import MemoryRaftLog as Log

    log = Log()
    log.append_as_leader([b"a"] * 3, 1)
    log.create_snapshot(OffsetAndEpoch(3, 1), None, b"s")
    log.truncate_to(0)  # what a log without recovery could look like after a crash
    with pytest.raises(RaftInvariantError, match="before its latest snapshot"):
        make_machine(1, log=log).start(0)
