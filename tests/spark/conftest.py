"""One local SparkSession for every Spark test, and a Samsa broker for them.

The environment is set before the JVM starts: workers are Python processes the
JVM launches, so they must run this venv's interpreter (``PYSPARK_PYTHON``),
and JVM start-up on 2 cores is faster with C1 only and the serial GC.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from samsa.testing import BrokerProcess
from samsa.testing.kafka_reference import KafkaReferenceMissing, load_reference

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable


def connector_jars() -> str:
    """Spark's JVM Kafka connector (``format("kafka")``) for ``spark.jars``, when
    ``scripts/kafka-reference.sh`` fetched it; "" otherwise (its tests skip)."""
    try:
        return ",".join(str(jar) for jar in load_reference().spark_jars())
    except KafkaReferenceMissing:
        return ""


def build_session(master: str = "local[2]", app: str = "samsa-tests") -> Any:
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master(master)
        .config("spark.jars", connector_jars())
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .config("spark.sql.pyspark.jvmStacktrace.enabled", "false")
        .getOrCreate()
    )


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    import samsa.spark

    session = build_session()
    session.sparkContext.setLogLevel("ERROR")
    samsa.spark.register(session)
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("spark-broker") / "data") as proc:
        yield proc
