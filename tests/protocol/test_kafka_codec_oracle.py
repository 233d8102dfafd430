"""Every schema against Kafka's own codec: Kafka reads our bytes and writes them back.

For each API both sides know, at every version both handle, a sample body of
each side (``samples.py``) is encoded by Samsa and handed to
``KafkaCodecOracle.java``, which reads it with the message classes Kafka
generates from its JSON and writes it again.  Kafka must read every byte and
write exactly the same bytes: a field missing, misplaced, of the wrong width,
wrongly nullable, or a tagged field with the wrong tag, shows as a difference.
The jars are those of ``scripts/kafka-reference.sh`` (Kafka 4.4.0 by default,
``SAMSA_KAFKA_VERSION`` for another), so this also pins Samsa's schemas to the
reference release.
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.kafka_tools.conftest import compile_java

from samsa.protocol.api import encode_message
from samsa.protocol.messages import APIS
from samsa.protocol.schema import Api
from samsa.testing.kafka_reference import KafkaReference

from .samples import VARIANTS, sample_body

SOURCE = Path(__file__).with_name("java") / "KafkaCodecOracle.java"


class Oracle:
    """One JVM answering line by line (a few thousand cases in a second or two)."""

    def __init__(self, reference: KafkaReference, classes: Path) -> None:
        self.proc = subprocess.Popen(
            reference.java_command(
                "KafkaCodecOracle",
                quick_start=True,
                classpath=f"{classes}:{reference.kafka_classpath}",
            ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().rstrip("\n")
        if not answer:
            raise AssertionError(f"the oracle exited (code {self.proc.poll()}) on: {line[:200]}")
        return answer

    def versions(self, key: int) -> tuple[int, int] | None:
        answer = self.ask(f"versions {key}")
        if not answer.startswith("OK "):
            return None
        low, high = answer.split()[1:]
        return int(low), int(high)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(30)


@pytest.fixture(scope="module")
def oracle(
    kafka_reference: KafkaReference, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Oracle]:
    classes = compile_java(
        kafka_reference, SOURCE, tmp_path_factory.mktemp("oracle"), ("kafka-clients",)
    )
    running = Oracle(kafka_reference, classes)
    try:
        yield running
    finally:
        running.close()


def _shared_versions(api: Api, oracle: Oracle) -> range:
    kafka = oracle.versions(api.key)
    if kafka is None:
        return range(0)
    return range(max(api.valid[0], kafka[0]), min(api.valid[1], kafka[1]) + 1)


@pytest.mark.parametrize("api", list(APIS.values()), ids=lambda a: f"{a.key}-{a.name}")
def test_kafka_reads_and_writes_our_bytes_unchanged(api: Api, oracle: Oracle) -> None:
    versions = _shared_versions(api, oracle)
    assert versions, f"Kafka's codec has no version of {api.name} in common with ours"
    failures = []
    for version in versions:
        for request, side in ((True, "request"), (False, "response")):
            for variant in VARIANTS:
                fields = api.request if request else api.response
                ours = encode_message(
                    api.key, version, sample_body(fields, version, variant), request
                )
                answer = oracle.ask(f"{api.key} {version} {side} {ours.hex()}")
                if answer != f"OK {ours.hex()}":
                    failures.append(f"v{version} {side} variant {variant}: {answer[:300]}")
    assert not failures, "\n".join(failures)


def test_every_api_we_advertise_is_one_kafka_knows(oracle: Oracle) -> None:
    """A version we advertise that Kafka's codec does not have would be ours alone."""
    beyond = {}
    for api in APIS.values():
        kafka = oracle.versions(api.key)
        high = api.advertised_range[1]
        if kafka is None or high > kafka[1]:
            beyond[api.name] = (api.advertised_range, kafka)
    assert not beyond


def _kafka_request_json(reference: KafkaReference, name: str) -> dict[str, object]:
    """``<name>Request.json`` as the kafka-clients jar ships it (comments dropped)."""
    (jar,) = reference.kafka_libs.glob("kafka-clients-*.jar")
    with zipfile.ZipFile(jar) as archive:
        text = archive.read(f"common/message/{name}Request.json").decode()
    return dict(json.loads(re.sub(r"//.*", "", text)))


def test_listeners_are_kafkas(kafka_reference: KafkaReference) -> None:
    """Which listeners serve an API decides what a client listener advertises."""
    ours = {api.name: sorted(api.listeners) for api in APIS.values()}
    kafkas = {
        api.name: sorted(_kafka_request_json(kafka_reference, api.name)["listeners"])  # type: ignore[arg-type]
        for api in APIS.values()
    }
    assert ours == kafkas
