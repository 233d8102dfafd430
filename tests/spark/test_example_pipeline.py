"""The clickstream example end to end: on the local session, and on a real
standalone Spark cluster (a master and two workers started from pyspark's own
launcher on loopback), where executors are separate processes that have only
the options and their partition."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from samsa.testing import BrokerProcess

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "clickstream"
sys.path.insert(0, str(EXAMPLE))
import generator  # noqa: E402
import pipeline  # noqa: E402
import reader  # noqa: E402

EVENTS = 3000


def expected_counts(seed: int) -> dict[tuple[str, str], int]:
    counts: Counter[tuple[str, str]] = Counter()
    for event in generator.events(EVENTS, seed):
        moment = datetime.strptime(event["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
        counts[(moment.strftime("%Y-%m-%dT%H:%M"), event["page"])] += 1
    return dict(counts)


def test_example_pipeline_on_the_local_session(
    spark: Any, broker: BrokerProcess, tmp_path: Path
) -> None:
    generator.send(broker.bootstrap, "clicks-local", generator.events(EVENTS, seed=11))
    query = pipeline.build_query(spark, broker.bootstrap, "clicks-local", "counts-local", tmp_path)
    query.awaitTermination(180)
    assert query.exception() is None
    from_topic = reader.topic_counts(broker.bootstrap, "counts-local")
    assert from_topic == expected_counts(11)
    assert reader.parquet_counts(tmp_path) == from_topic


class SparkDaemon:
    """A standalone master or worker run in the foreground by ``spark-class``."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        spark_class = Path(sys.prefix) / "lib/python3.11/site-packages/pyspark/bin/spark-class"
        self.proc = subprocess.Popen(
            [str(spark_class), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=env,
        )  # fmt: skip
        self.lines: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match[str]:
        regex = re.compile(pattern)
        found: list[re.Match[str]] = []

        def seen() -> bool:
            found[:] = [m for line in self.lines if (m := regex.search(line))]
            return bool(found) or self.proc.poll() is not None

        with self._changed:
            self._changed.wait_for(seen, timeout)
        assert found, f"{pattern!r} not seen:\n" + "".join(self.lines[-30:])
        return found[0]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("spark-cluster")
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_WORKER_DIR": str(work / "workers"),
        "SPARK_LOG_DIR": str(work / "logs"),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    }
    master = SparkDaemon(
        ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"],
        env,
    )  # fmt: skip
    daemons = [master]
    try:
        url = master.wait_for(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)").group(1)
        for _ in range(2):
            worker = SparkDaemon(
                ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                 "--cores", "1", "--memory", "1g", "--webui-port", "0"],
                env,
            )  # fmt: skip
            daemons.append(worker)
            worker.wait_for(r"Successfully registered with master")
        yield url
    finally:
        for daemon in reversed(daemons):
            daemon.stop()


@pytest.mark.timeout(600)  # the pipeline alone may take 400 s, and three JVMs start first
def test_example_pipeline_on_a_standalone_cluster(
    standalone_cluster: str, broker: BrokerProcess, tmp_path: Path
) -> None:
    generator.send(broker.bootstrap, "clicks-cluster", generator.events(EVENTS, seed=23))
    result = subprocess.run(
        [
            sys.executable, str(EXAMPLE / "pipeline.py"), "--master", standalone_cluster,
            "--bootstrap", broker.bootstrap, "--source-topic", "clicks-cluster",
            "--counts-topic", "counts-cluster", "--output", str(tmp_path), "--available-now",
        ],
        capture_output=True, text=True, timeout=400,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    from_topic = reader.topic_counts(broker.bootstrap, "counts-cluster")
    assert from_topic == expected_counts(23)
    assert reader.parquet_counts(tmp_path) == from_topic
