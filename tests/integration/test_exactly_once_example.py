"""examples/exactly_once/uppercase.py under kill -9 of itself and of the broker.

The example runs as a process against a real broker.  It is SIGKILLed while it
commits transactions, the broker is SIGKILLed and restarted, and the example
is SIGKILLed once more; the last run finishes the input.  A read_committed
reader of the output then finds each input value exactly once (upper-cased),
and the group's committed offsets are the input's ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).parents[2] / "examples" / "exactly_once" / "uppercase.py"
INPUT, OUTPUT, PARTITIONS, RECORDS = "words", "WORDS", 2, 3000


def start_example(bootstrap: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--bootstrap", bootstrap, "--input", INPUT,
         "--output", OUTPUT, "--partitions", str(PARTITIONS), "--idle-exit-s", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=os.environ.copy(),
    )  # fmt: skip


def wait_for_commits(proc: subprocess.Popen[str], count: int, timeout: float = 60) -> None:
    """Read the example's 'committed N' lines until ``count`` more transactions."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    seen = 0
    while seen < count and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen += line.startswith("committed")
    assert seen >= count, f"the example committed {seen} transactions, wanted {count}"


def read_output(bootstrap: str) -> list[bytes]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "checker",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.assign([TopicPartition(OUTPUT, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    quiet_until = None
    while time.monotonic() < deadline:
        msg = c.poll(0.2)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
            quiet_until = None
        elif len(values) >= RECORDS:
            quiet_until = quiet_until or time.monotonic() + 2
            if time.monotonic() > quiet_until:
                break
    c.close()
    return values


def test_each_input_gives_exactly_one_output_through_crashes(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    procs: list[subprocess.Popen[str]] = []
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for name, partitions in ((INPUT, PARTITIONS), (OUTPUT, 1)):
            admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)
        seed = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
        for i in range(RECORDS):
            seed.produce(INPUT, value=b"w%05d" % i, partition=i % PARTITIONS)
        assert seed.flush(30) == 0

        procs.append(start_example(broker.bootstrap))
        wait_for_commits(procs[-1], 3)
        procs[-1].kill()  # the example dies mid-stream
        broker.kill()  # and the broker with it
        bootstrap = broker.start()
        procs.append(start_example(bootstrap))
        wait_for_commits(procs[-1], 3)
        procs[-1].kill()
        procs.append(start_example(bootstrap))
        assert procs[-1].wait(120) == 0, "the last run finishes the input and exits"

        values = read_output(bootstrap)
        counts = Counter(values)
        assert len(counts) == RECORDS, f"{RECORDS - len(counts)} inputs have no output"
        assert max(counts.values()) == 1, (
            f"duplicates: {[v for v, n in counts.items() if n > 1][:5]}"
        )
        assert set(values) == {b"W%05d" % i for i in range(RECORDS)}
        group = Consumer({"bootstrap.servers": bootstrap, "group.id": "uppercase"})
        committed = group.committed(
            [TopicPartition(INPUT, p) for p in range(PARTITIONS)], timeout=10
        )
        group.close()
        assert sum(tp.offset for tp in committed) == RECORDS
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        broker.kill()


def test_without_input_it_says_what_it_expects_and_what_it_did(tmp_path: Path) -> None:
    """Issue 38, item 6: run with no input, the example auto-created its input
    topic and exited printing nothing."""
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        example = [sys.executable, str(EXAMPLE), "--bootstrap", broker.bootstrap]
        missing = subprocess.run(
            [*example, "--input", "no-input", "--output", "NO-INPUT"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert missing.returncode == 2, missing.stderr
        assert "the input topic 'no-input' does not exist" in missing.stderr
        assert "samsa topics create no-input" in missing.stderr
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        assert "no-input" not in admin.list_topics(timeout=10).topics  # not auto-created

        admin.create_topics([NewTopic("quiet", 2, 1)])["quiet"].result(15)
        idle = subprocess.run(
            [*example, "--input", "quiet", "--output", "QUIET", "--idle-exit-s", "1"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert idle.returncode == 0, idle.stderr
        lines = idle.stdout.splitlines()
        assert lines[0].startswith("reading 'quiet' (2 partitions, read_committed"), lines
        assert "writing each value upper-cased to 'QUIET'" in lines[0]
        assert lines[-1] == "no input for 1 s: 0 records in 0 transactions this run; stopping"
    finally:
        broker.stop()
        broker.kill()
