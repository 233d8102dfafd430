"""A Kafka Streams application (word count, ``processing.guarantee`` at_least_once
and exactly_once_v2) against Samsa: the topology in java/SamsaWordCount.java is compiled against the
fetched Kafka Streams jars, reads lines from one Samsa topic, keeps counts in a
state store with a changelog topic and a repartition topic, and writes every new
count to an output topic.

Each test runs under both ``group.protocol`` values: ``classic`` (a consumer
group whose leader runs Streams' assignor and creates the internal topics
itself) and ``streams`` (KIP-1071: Samsa's streams group coordinator configures
the topology, creates the internal topics and assigns the tasks)."""

from __future__ import annotations

import re
import struct
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from tests.kafka_tools.conftest import STARTUP_TIMEOUT_S, TEST_TIMEOUT_S, KafkaTools, compile_java
from tests.kafka_tools.tool_classes import (
    CONFIGS,
    DUMP_LOG_SEGMENTS,
    STREAMS_GROUPS,
    main_class_of,
)

from samsa.testing import BrokerProcess
from samsa.testing.kafka_reference import KafkaReference

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

PROTOCOLS = ["classic", "streams"]
STREAMS_SETTINGS = {
    # A SIGKILLed instance's members leave after 6 s, not Kafka's 45 s, and
    # members heartbeat every second, so tasks move as fast as the classic runs'.
    "group.streams.session.timeout.ms": "6000",
    "group.streams.min.session.timeout.ms": "1000",
    "group.streams.heartbeat.interval.ms": "1000",
    "group.streams.min.heartbeat.interval.ms": "500",
}


@pytest.fixture(scope="module")
def samsa_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """This module's broker: one node with fast streams-group settings."""
    proc = BrokerProcess(tmp_path_factory.mktemp("samsa") / "data", STREAMS_SETTINGS)
    proc.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield proc
    finally:
        proc.stop()
        proc.kill()


JAVA_SOURCE = Path(__file__).parent / "java" / "SamsaWordCount.java"
LINES = ["the cat sat", "the dog sat on the cat", "Hello hello HELLO", "a b a c a b"] * 5


def compile_word_count(reference: KafkaReference, out_dir: Path) -> Path:
    return compile_java(reference, JAVA_SOURCE, out_dir, ("kafka-streams-", "kafka-clients-"))


def expected_counts(rounds: int = 1) -> Counter[str]:
    return Counter(word for line in LINES * rounds for word in line.lower().split())


class WordCountApp:
    """One SamsaWordCount JVM; ``running`` is set once Streams reports RUNNING
    (or the JVM's stdout closes, so a failed start does not hang the test).
    Its stderr goes to a file: a pipe nobody drains fills up and blocks the
    JVM's logging, and with it Streams' close."""

    def __init__(self, argv: list[str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        with stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, text=True)
        self.running = threading.Event()
        self.states: list[str] = []
        self._follower = threading.Thread(target=self._follow_states, daemon=True)
        self._follower.start()

    def _follow_states(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.states.append(line.strip())
            if line.strip() == "RUNNING":
                self.running.set()
        self.running.set()

    def wait_running(self) -> None:
        assert self.running.wait(300) and "RUNNING" in self.states, (
            self.states,
            self.stderr_tail(),
        )

    def stderr_tail(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        """SIGTERM, then the states the JVM printed up to its exit: the reader
        thread is joined, so a last NOT_RUNNING still in the pipe is counted."""
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self._follower.join(10)

    def assert_stopped_cleanly(self) -> None:
        assert self.states[-1] == "NOT_RUNNING" and "ERROR" not in self.states, (
            self.states,
            self.stderr_tail(),
        )

    def kill(self) -> None:
        """SIGKILL: no commit, no abort, no LeaveGroup; whatever transaction is
        open stays open on the broker until the next instance fences it."""
        self.process.kill()
        self.process.wait(30)


class WordCountRun:
    """Topics, a compiled app and the argv that runs it for one guarantee."""

    def __init__(
        self,
        reference: KafkaReference,
        bootstrap: str,
        tmp_path: Path,
        name: str,
        guarantee: str,
        threads: int = 1,
        protocol: str = "classic",
    ) -> None:
        self.bootstrap = bootstrap
        self.lines_topic, self.counts_topic = f"lines-{name}", f"counts-{name}"
        self.name = name
        admin = AdminClient({"bootstrap.servers": bootstrap})
        topics = [NewTopic(self.lines_topic, 2, 1), NewTopic(self.counts_topic, 1, 1)]
        for future in admin.create_topics(topics, operation_timeout=30).values():
            future.result(60)
        self.classes = compile_word_count(reference, tmp_path / "classes")
        self.reference = reference
        self.application_id = f"word-count-{name}"
        self.guarantee, self.threads, self.protocol = guarantee, threads, protocol
        self.argv = self.instance_argv(tmp_path / "state")
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        self.readers = 0

    def instance_argv(self, state_dir: Path) -> list[str]:
        """The JVM of one instance; another state dir is another Streams process."""
        return self.reference.java_command(
            "SamsaWordCount", self.bootstrap, self.application_id, self.lines_topic,
            self.counts_topic, str(state_dir), self.guarantee, str(self.threads), self.protocol,
            heap="512m", quick_start=True,
            classpath=f"{self.classes}:{self.reference.kafka_classpath}",
        )  # fmt: skip

    def produce_lines(self, halt_after: int | None = None) -> None:
        """LINES, with the app's "halt now" line after the first ``halt_after``."""
        lines = list(LINES)
        if halt_after is not None:
            lines.insert(halt_after, "halt now")
        for number, line in enumerate(lines):
            self.producer.produce(self.lines_topic, key=str(number), value=line)
        assert self.producer.flush(60) == 0

    def log_end_offset(self) -> int:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "watermarks"})
        try:
            _, high = consumer.get_watermark_offsets(TopicPartition(self.counts_topic, 0), 30)
        finally:
            consumer.close()
        return int(high)

    def read_count_updates(self, want: Counter[str]) -> tuple[dict[str, list[int]], list[int]]:
        """Every committed count per word in log order, and the offsets they
        were read at, read with read_committed until each word's latest count is
        ``want``'s (or 300 s of polls run out)."""
        self.readers += 1
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"readers-{self.name}-{self.readers}",
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
            }
        )
        updates: dict[str, list[int]] = {}
        offsets: list[int] = []
        try:
            consumer.subscribe([self.counts_topic])
            polls_left = 600
            while latest_counts(updates) != dict(want) and polls_left:
                polls_left -= 1
                message = consumer.poll(0.5)
                if message is None or message.error():
                    continue
                (count,) = struct.unpack(">q", message.value())
                updates.setdefault(message.key().decode(), []).append(count)
                offsets.append(message.offset())
        finally:
            consumer.close()
        return updates, offsets


def latest_counts(updates: dict[str, list[int]]) -> dict[str, int]:
    return {word: seen[-1] for word, seen in updates.items()}


def assert_each_update_once(updates: dict[str, list[int]], want: Counter[str]) -> None:
    """With the cache off every input word yields one count update; exactly once
    means each word's committed updates are 1, 2, ..., n with none repeated."""
    assert latest_counts(updates) == dict(want)
    for word, seen in updates.items():
        assert seen == list(range(1, want[word] + 1)), (word, seen)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_word_count(
    kafka_reference: KafkaReference,
    samsa_node: BrokerProcess,
    tmp_path: Path,
    guarantee: str,
    protocol: str,
) -> None:
    name = f"{guarantee}-{protocol}"
    run = WordCountRun(
        kafka_reference, samsa_node.bootstrap, tmp_path, name, guarantee, protocol=protocol
    )
    app = WordCountApp(run.argv, tmp_path / "app.stderr")
    try:
        app.wait_running()
        run.produce_lines()
        updates, offsets = run.read_count_updates(expected_counts())
        assert latest_counts(updates) == dict(expected_counts())
        if guarantee == "exactly_once_v2":
            assert_each_update_once(updates, expected_counts())
            # Commit markers take offsets of their own (after a transaction's
            # records): the log being longer than its records shows the counts
            # really were written in transactions.
            assert run.log_end_offset() > len(offsets), (run.log_end_offset(), offsets)
    finally:
        app.stop()
    app.assert_stopped_cleanly()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_word_count_exactly_once_survives_a_kill_mid_transaction(
    kafka_reference: KafkaReference, samsa_node: BrokerProcess, tmp_path: Path, protocol: str
) -> None:
    """The app, with two stream threads (two transactional producers whose
    transactions overlap on the output and offsets partitions), halts (as on
    SIGKILL) while processing the line "halt now", so with a transaction open; restarted on the same state directory (same process
    id, so the same transactional.id, which fences the dead instance and aborts
    its transaction) the committed counts are still each update exactly once.
    (Under at_least_once the same run reprocesses the uncommitted lines and
    reads e.g. dog 18 instead of 15.)  Under the streams protocol the killed
    instance's members hold their tasks until the broker's session timeout
    fences them; the same process id keeps the restarted instance from running
    a task the dead one still holds."""
    run = WordCountRun(
        kafka_reference,
        samsa_node.bootstrap,
        tmp_path,
        f"eos-halt-{protocol}",
        "exactly_once_v2",
        threads=2,
        protocol=protocol,
    )
    first = WordCountApp(run.argv, tmp_path / "first.stderr")
    try:
        first.wait_running()
        run.produce_lines()
        run.read_count_updates(expected_counts(1))
        run.produce_lines(halt_after=len(LINES) // 2)
        assert first.process.wait(120) == 137, first.stderr_tail()
    finally:
        first.kill()
    second = WordCountApp(run.argv, tmp_path / "second.stderr")
    want = expected_counts(3) + Counter({"halt": 1, "now": 1})
    try:
        second.wait_running()
        run.produce_lines()
        updates, _ = run.read_count_updates(want)
        assert_each_update_once(updates, want)
    finally:
        second.stop()
    second.assert_stopped_cleanly()


def members_with_active_tasks(tools: KafkaTools, group: str) -> dict[str, str]:
    """kafka-streams-groups --describe --members: each member's process and active tasks."""
    described = tools.admin(STREAMS_GROUPS, "--describe", "--members", "--group", group)
    found = {}
    for line in described.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 5 and fields[0] == group and "ACTIVE:" in line:
            active = line.split("ACTIVE:", 1)[1].split("STANDBY:")[0].strip()
            if re.search(r"\[\d", active):
                found[fields[1]] = fields[2]
    return found


def assert_kafka_decodes_streams_records(
    reference: KafkaReference, node: BrokerProcess, group: str
) -> None:
    """Kafka's own DumpLogSegments --offsets-decoder reads the streams group records
    Samsa wrote to __consumer_offsets: every record type of the group, byte for byte
    in Kafka's schemas."""
    segments = sorted(str(f) for f in node.data_dir.glob("__consumer_offsets-*/*.log"))
    done = subprocess.run(
        reference.java_command(
            main_class_of(DUMP_LOG_SEGMENTS, reference.kafka_version), "--offsets-decoder", "--print-data-log", "--files",
            ",".join(segments), quick_start=True,
        ),
        capture_output=True, text=True, timeout=180, check=True,
    )  # fmt: skip
    seen = set(re.findall(rf'key: \{{"type":"(\d+)","data":\{{"groupId":"{group}"', done.stdout))
    assert seen >= {"17", "19", "20", "21", "22", "23"}, (seen, done.stdout[-3000:])
    assert "Unknown" not in done.stdout and "Exception" not in done.stderr, done.stderr


def test_a_second_streams_instance_takes_over_tasks_exactly_once(
    kafka_reference: KafkaReference, samsa_node: BrokerProcess, tmp_path: Path
) -> None:
    """Under the streams protocol a second instance (another state dir: another process
    id) joins a running exactly-once application: the coordinator moves half the tasks
    to it once the first instance revoked them, which Kafka's kafka-streams-groups tool
    shows, and every count is still written once."""
    run = WordCountRun(
        kafka_reference,
        samsa_node.bootstrap,
        tmp_path,
        "eos-scale-streams",
        "exactly_once_v2",
        protocol="streams",
    )
    tools = KafkaTools(kafka_reference, samsa_node.bootstrap)
    first = WordCountApp(run.instance_argv(tmp_path / "state-a"), tmp_path / "first.stderr")
    second: WordCountApp | None = None
    try:
        first.wait_running()
        run.produce_lines()
        run.read_count_updates(expected_counts(1))
        assert len(members_with_active_tasks(tools, run.application_id)) == 1
        second = WordCountApp(run.instance_argv(tmp_path / "state-b"), tmp_path / "second.stderr")
        second.wait_running()
        run.produce_lines()
        for _ in range(30):  # each look is one tool JVM (seconds), 30 at most
            owners = members_with_active_tasks(tools, run.application_id)
            if len(set(owners.values())) == 2:
                break
        assert len(set(owners.values())) == 2, (owners, second.stderr_tail())
        run.produce_lines()
        updates, _ = run.read_count_updates(expected_counts(3))
        assert_each_update_once(updates, expected_counts(3))
        assert run.application_id in tools.admin(STREAMS_GROUPS, "--list").split()
        assert_kafka_decodes_streams_records(kafka_reference, samsa_node, run.application_id)
    finally:
        if second is not None:
            second.stop()
        first.stop()
    first.assert_stopped_cleanly()
    assert second is not None
    second.assert_stopped_cleanly()


def test_group_configs_with_kafka_configs(
    kafka_reference: KafkaReference, samsa_node: BrokerProcess
) -> None:
    """kafka-configs sets a streams group's own settings (GROUP resources), within the
    broker's bounds, and describes them over the broker defaults they override."""
    tools = KafkaTools(kafka_reference, samsa_node.bootstrap)
    group = ["--entity-type", "groups", "--entity-name", "configured-app"]
    tools.admin(
        CONFIGS, *group, "--alter", "--add-config",
        "streams.session.timeout.ms=5000,streams.num.standby.replicas=1",
    )  # fmt: skip
    described = tools.admin(CONFIGS, *group, "--describe")
    assert "streams.session.timeout.ms=5000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:" in (
        described
    ), described
    assert "DEFAULT_CONFIG:group.streams.num.standby.replicas=0}" in described, described
    too_short = subprocess.run(
        kafka_reference.java_command(
            CONFIGS, "--bootstrap-server", samsa_node.bootstrap, *group, "--alter",
            "--add-config", "streams.session.timeout.ms=5", quick_start=True,
        ),
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert too_short.returncode != 0
    assert "streams.session.timeout.ms must be in the range 1000 to 60000 inclusive." in (
        too_short.stderr
    ), too_short.stderr
