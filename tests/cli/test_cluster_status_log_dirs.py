"""``samsa cluster status`` names a broker's failed log dir with its error.

A broker keeps answering while one of its log dirs is offline only for as long as
it has another dir (or, with one, during its controlled shutdown), so the line is
checked on the rendered view of such a status; gathering it is DescribeLogDirs
(``Admin.failed_log_dirs``), whose per-dir error the broker's handler sets."""

from __future__ import annotations

import pytest

from samsa.cli.actions.cluster_status import render


def test_an_offline_log_dir_is_one_line_under_the_brokers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    broker = {
        "node_id": 2,
        "host": "10.0.0.2",
        "port": 9092,
        "rack": None,
        "fenced": False,
        "voter": True,
        "observer": False,
        "offline_log_dirs": [{"log_dir": "/data/kafka", "error": "KAFKA_STORAGE_ERROR"}],
    }
    healthy = {**broker, "node_id": 1, "offline_log_dirs": []}
    partitions = {
        "total": 0,
        "topics": 0,
        "under_replicated": [],
        "under_min_isr": [],
        "offline": [],
    }
    render(
        {
            "cluster_id": "c",
            "quorum": {"error": "no quorum in this test"},
            "brokers": [healthy, broker],
            "partitions": partitions,
        }
    )
    out = capsys.readouterr().out
    assert "broker 2: log dir /data/kafka offline (KAFKA_STORAGE_ERROR)" in out
    assert "broker 1: log dir" not in out
