"""Where ``scripts/kafka-reference.sh`` put Apache Kafka and Spark's Kafka connector.

Tests and benchmarks run Kafka's own broker, tools and clients beside Samsa. The
script writes ``.kafka-reference/reference.env`` naming the versions and folders it
fetched; reading that file (instead of globbing for versions) keeps every caller on
exactly the pinned jars. ``SAMSA_KAFKA_REFERENCE`` points at another folder.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

_REPO_ROOT = Path(__file__).resolve().parents[3]


class KafkaReferenceMissing(RuntimeError):
    """The jars were never fetched: the message says which command fetches them."""


@dataclass(frozen=True)
class KafkaReference:
    kafka_version: str
    kafka_libs: Path
    kafka_log4j: Path
    spark_version: str
    spark_kafka_jars: Path

    @property
    def kafka_classpath(self) -> str:
        """A JVM class path of every jar of Kafka (the ``libs/*`` wildcard form)."""
        return str(self.kafka_libs / "*")

    def spark_jars(self) -> list[Path]:
        """The connector's jars, for ``spark.jars`` (a comma-separated list of paths)."""
        return sorted(self.spark_kafka_jars.glob("*.jar"))

    def java_command(
        self,
        main_class: str,
        *args: str,
        heap: str = "256m",
        quick_start: bool = False,
        classpath: str | None = None,
        jvm_options: Sequence[str] = (),
    ) -> list[str]:
        """argv that runs one of Kafka's main classes (a tool, the broker) as its
        ``bin/*.sh`` script would, logging at WARN to stderr.  ``quick_start``
        (for short-lived tools in tests, never for benchmarks) compiles with C1
        only and collects with the serial GC: a third less CPU to start a JVM
        that lives a few seconds.  ``classpath`` replaces Kafka's jars (a test's
        own classes prepended to them).  ``jvm_options`` come last before the
        class, so a ``-D`` there overrides the defaults."""
        java = shutil.which("java") or "java"
        quick = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"] if quick_start else []
        return [
            java,
            f"-Xmx{heap}",
            *quick,
            "-cp",
            classpath or self.kafka_classpath,
            f"-Dlog4j2.configurationFile={self.kafka_log4j}",
            *jvm_options,
            main_class,
            *args,
        ]


def reference_dir() -> Path:
    return Path(os.environ.get("SAMSA_KAFKA_REFERENCE", _REPO_ROOT / ".kafka-reference"))


def load_reference() -> KafkaReference:
    env_file = reference_dir() / "reference.env"
    if not env_file.is_file():
        raise KafkaReferenceMissing(
            f"{env_file} not found: run scripts/kafka-reference.sh to fetch Apache Kafka"
        )
    values: dict[str, str] = {}
    for line in env_file.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return KafkaReference(
        kafka_version=values["KAFKA_VERSION"],
        kafka_libs=Path(values["KAFKA_LIBS"]),
        kafka_log4j=Path(values["KAFKA_LOG4J"]),
        spark_version=values["SPARK_VERSION"],
        spark_kafka_jars=Path(values["SPARK_KAFKA_JARS"]),
    )


@pytest.fixture(scope="session")
def kafka_reference() -> KafkaReference:
    """The fetched jars. In CI (``CI`` set) a missing fetch fails the test, since
    ``scripts/test.sh`` always fetches; on a developer's machine it skips with
    the command that fetches them."""
    try:
        return load_reference()
    except KafkaReferenceMissing as missing:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(missing))
