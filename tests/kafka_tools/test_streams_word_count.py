"""A Kafka Streams application (word count, ``processing.guarantee=at_least_once``)
against Samsa: the topology in java/SamsaWordCount.java is compiled against the
fetched Kafka Streams jars, reads lines from one Samsa topic, keeps counts in a
state store with a changelog topic and a repartition topic that Streams creates
itself, and writes every new count to an output topic."""

from __future__ import annotations

import shutil
import struct
import subprocess
import threading
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.kafka_tools.conftest import TEST_TIMEOUT_S

from samsa.testing import BrokerProcess
from samsa.testing_kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

JAVA_SOURCE = Path(__file__).parent / "java" / "SamsaWordCount.java"
LINES = ["the cat sat", "the dog sat on the cat", "Hello hello HELLO", "a b a c a b"] * 5


def compile_word_count(reference: KafkaReference, out_dir: Path) -> Path:
    """javac against only the jars the topology imports (faster than all of Kafka's)."""
    jars = [
        str(jar)
        for jar in reference.kafka_libs.glob("*.jar")
        if jar.name.startswith(("kafka-streams-", "kafka-clients-"))
    ]
    javac = shutil.which("javac")
    if javac is None:
        pytest.fail("javac not found: Kafka Streams tests need a JDK")
    subprocess.run(
        [javac, "-d", str(out_dir), "-cp", ":".join(jars), str(JAVA_SOURCE)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out_dir


def expected_counts() -> Counter[str]:
    return Counter(word for line in LINES for word in line.lower().split())


def test_word_count_at_least_once(
    kafka_reference: KafkaReference, samsa_node: BrokerProcess, tmp_path: Path
) -> None:
    classes = compile_word_count(kafka_reference, tmp_path / "classes")
    bootstrap = samsa_node.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics(
        [NewTopic("lines", 2, 1), NewTopic("counts", 1, 1)], operation_timeout=30
    ).values():
        future.result(60)

    argv = kafka_reference.java_command(
        "SamsaWordCount", bootstrap, "word-count", "lines", "counts", str(tmp_path / "state"),
        heap="512m", quick_start=True,
        classpath=f"{classes}:{kafka_reference.kafka_classpath}",
    )  # fmt: skip
    app = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    running = threading.Event()
    states: list[str] = []

    def follow_states() -> None:
        assert app.stdout is not None
        for line in app.stdout:
            states.append(line.strip())
            if line.strip() == "RUNNING":
                running.set()
        running.set()

    threading.Thread(target=follow_states, daemon=True).start()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "count-readers",
            "auto.offset.reset": "earliest",
        }
    )
    try:
        assert running.wait(300) and "RUNNING" in states, (states, app.stderr)
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        for number, line in enumerate(LINES):
            producer.produce("lines", key=str(number), value=line)
        assert producer.flush(60) == 0

        consumer.subscribe(["counts"])
        latest: dict[str, int] = {}
        want = dict(expected_counts())
        deadline_polls = 600
        while latest != want and deadline_polls:
            deadline_polls -= 1
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            (count,) = struct.unpack(">q", message.value())
            latest[message.key().decode()] = count
        assert latest == want
    finally:
        consumer.close()
        app.terminate()
        try:
            app.wait(60)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait(10)
    assert states[-1] == "NOT_RUNNING" and "ERROR" not in states, states
