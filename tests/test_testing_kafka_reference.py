"""Which Kafka the tests run against: the pinned reference, or the one named."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.testing.kafka_reference import (
    DEFAULT_KAFKA_VERSION,
    PREVIOUS_KAFKA_VERSION,
    KafkaReferenceMissing,
    load_reference,
)


def write_env(folder: Path, name: str, version: str) -> None:
    (folder / name).write_text(
        f"KAFKA_VERSION={version}\nKAFKA_LIBS={folder}/kafka-{version}/libs\n"
        f"KAFKA_LOG4J={folder}/kafka-{version}/log4j2.yaml\n"
        f"SPARK_VERSION=4.2.0\nSPARK_KAFKA_JARS={folder}/spark/libs\n"
    )


def test_the_default_and_the_previous_reference_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAMSA_KAFKA_REFERENCE", str(tmp_path))
    monkeypatch.delenv("SAMSA_KAFKA_VERSION", raising=False)
    write_env(tmp_path, f"reference-{DEFAULT_KAFKA_VERSION}.env", DEFAULT_KAFKA_VERSION)
    # A folder fetched before versions had their own files still serves its version.
    write_env(tmp_path, "reference.env", PREVIOUS_KAFKA_VERSION)
    assert load_reference().kafka_version == DEFAULT_KAFKA_VERSION
    assert load_reference().kafka_libs == tmp_path / f"kafka-{DEFAULT_KAFKA_VERSION}" / "libs"
    monkeypatch.setenv("SAMSA_KAFKA_VERSION", PREVIOUS_KAFKA_VERSION)
    assert load_reference().kafka_version == PREVIOUS_KAFKA_VERSION


def test_a_version_never_fetched_names_the_command_that_fetches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAMSA_KAFKA_REFERENCE", str(tmp_path))
    with pytest.raises(KafkaReferenceMissing, match=r"scripts/kafka-reference.sh 3\.9\.1"):
        load_reference("3.9.1")
    with pytest.raises(KafkaReferenceMissing, match=r"run scripts/kafka-reference.sh to fetch"):
        load_reference(DEFAULT_KAFKA_VERSION)
