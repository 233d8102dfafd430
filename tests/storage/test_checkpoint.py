"""Checkpoint files in Kafka's text format."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.storage.files.checkpoint import CorruptCheckpointError, read_checkpoint, write_checkpoint


def test_round_trip_in_kafka_format(tmp_path: Path) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    write_checkpoint(path, {("orders", 1): 99, ("orders", 0): 1234, ("my-topic.v2", 10): 0})
    assert path.read_text() == "0\n3\nmy-topic.v2 10 0\norders 0 1234\norders 1 99\n"
    assert read_checkpoint(path) == {("orders", 0): 1234, ("orders", 1): 99, ("my-topic.v2", 10): 0}
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()


def test_reads_a_file_written_by_kafka(tmp_path: Path) -> None:
    path = tmp_path / "log-start-offset-checkpoint"
    path.write_text("0\n2\n__consumer_offsets 7 42\nt 0 5\n")
    assert read_checkpoint(path) == {("__consumer_offsets", 7): 42, ("t", 0): 5}


def test_missing_file_reads_empty(tmp_path: Path) -> None:
    assert read_checkpoint(tmp_path / "nope") == {}


@pytest.mark.parametrize("text", ["1\n0\n", "0\n2\nt 0 1\n", "0\n1\nt x 1\n", "", "0\n1\nt 0\n"])
def test_malformed_files_raise(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cp"
    path.write_text(text)
    with pytest.raises(CorruptCheckpointError):
        read_checkpoint(path)
