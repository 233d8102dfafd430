"""Where ``scripts/kafka-reference.sh`` put Apache Kafka and Spark's Kafka connector.

Tests and benchmarks run Kafka's own broker, tools and clients beside Samsa. The
script writes ``.kafka-reference/reference-<version>.env`` naming the versions and
folders it fetched; reading that file (instead of globbing for versions) keeps
every caller on exactly the pinned jars. ``SAMSA_KAFKA_REFERENCE`` points at
another folder.

Kafka 4.4.0 is the reference. The previous one, 4.1.1, stays runnable for one
release (users upgrade their clients one at a time, so Samsa answers both):
``scripts/kafka-reference.sh 4.1.1`` fetches it and ``SAMSA_KAFKA_VERSION=4.1.1``
runs the tests and benchmarks against it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

_REPO_ROOT = Path(__file__).resolve().parents[3]

DEFAULT_KAFKA_VERSION = "4.4.0"
"""The reference; keep in step with ``PINNED_KAFKA_VERSION`` in the script."""
PREVIOUS_KAFKA_VERSION = "4.1.1"
"""The second reference, kept for one release."""
VERSION_VARIABLE = "SAMSA_KAFKA_VERSION"


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


def selected_version() -> str:
    """The Kafka version tests run against: ``SAMSA_KAFKA_VERSION`` or the default."""
    return os.environ.get(VERSION_VARIABLE, "").strip() or DEFAULT_KAFKA_VERSION


def _read_env(env_file: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in env_file.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return values


def load_reference(version: str | None = None) -> KafkaReference:
    """The jars of ``version`` (default: ``selected_version()``).  A folder fetched
    by the script before versions had their own files (one ``reference.env``) is
    still read when it names the version asked for."""
    version = version or selected_version()
    env_file = reference_dir() / f"reference-{version}.env"
    legacy = reference_dir() / "reference.env"
    if env_file.is_file():
        values = _read_env(env_file)
    elif legacy.is_file() and _read_env(legacy).get("KAFKA_VERSION") == version:
        values = _read_env(legacy)
    else:
        fetch = "scripts/kafka-reference.sh" + (
            "" if version == DEFAULT_KAFKA_VERSION else f" {version}"
        )
        raise KafkaReferenceMissing(
            f"{env_file} not found: run {fetch} to fetch Apache Kafka {version}"
        )
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
