"""``samsa cluster reassign`` with a plan's ``log_dirs``: a replica moved between
its broker's log dirs (AlterReplicaLogDirs), ``--wait`` following the move
(DescribeLogDirs) until no future log is left, a dir the broker lacks refused
with Kafka's error.  One broker with two log dirs, the real executable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from samsa.client.admin import Admin, NewTopic
from samsa.client.producer import Producer
from samsa.testing import BrokerProcess
from samsa.testing.cluster import FAST_SETTINGS


def samsa(bootstrap: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samsa.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "SAMSA_BOOTSTRAP": bootstrap},
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result.stdout


def test_reassign_moves_a_replica_between_log_dirs(tmp_path: Path) -> None:
    """A plan's ``log_dirs``: the replica moves to the dir named, ``--wait`` follows
    it until no future log is left; a dir the broker lacks is Kafka's error."""
    a, b = tmp_path / "a", tmp_path / "b"
    broker = BrokerProcess(Path(f"{a},{b}"), FAST_SETTINGS)
    broker.start()
    try:
        with Admin({"bootstrap.servers": broker.bootstrap}) as admin:
            admin.create_topics([NewTopic("cli-dirs", 1, 1)], timeout=10)
        source, target = (a, b) if (a / "cli-dirs-0").is_dir() else (b, a)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        try:
            for i in range(500):
                producer.send("cli-dirs", value=b"v%d" % i, partition=0)
            producer.flush(15)
        finally:
            producer.close()
        plan = tmp_path / "dirs.json"
        entry = {"topic": "cli-dirs", "partition": 0, "replicas": [1], "log_dirs": [str(target)]}
        plan.write_text(json.dumps({"version": 1, "partitions": [entry]}))
        dry = ok(samsa(broker.bootstrap, "cluster", "reassign", "--plan", str(plan)))
        assert f"cli-dirs-0 on broker 1 goes to {target}" in dry
        out = ok(
            samsa(broker.bootstrap, "cluster", "reassign", "--plan", str(plan), "--execute",
                  "--wait", "--timeout", "20")
        )  # fmt: skip
        assert f"Started moving cli-dirs-0 on broker 1 to {target}" in out, out
        assert "Reassignment of 1 partition(s) complete." in out, out
        assert out.count("cli-dirs-0: replicas 1 isr 1 done") == 1, out  # each state once
        with Admin({"bootstrap.servers": broker.bootstrap}) as admin:
            where = admin.describe_replica_log_dirs([("cli-dirs", 0, 1)], timeout=10)
        assert where[("cli-dirs", 0, 1)].current_dir == str(target)
        assert where[("cli-dirs", 0, 1)].future_dir is None
        assert not (source / "cli-dirs-0").exists()

        entry["log_dirs"] = [str(tmp_path / "c")]
        plan.write_text(json.dumps({"version": 1, "partitions": [entry]}))
        refused = samsa(broker.bootstrap, "cluster", "reassign", "--plan", str(plan), "--execute")
        assert refused.returncode == 2, (refused.stdout, refused.stderr)
        assert "LOG_DIR_NOT_FOUND" in refused.stderr, refused.stderr
    finally:
        broker.kill()
