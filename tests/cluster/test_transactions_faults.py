"""Exactly-once consume-transform-produce on three nodes, through four faults.

Each case fills an input topic, then runs ``txn_worker`` (confluent-kafka:
read_committed input, transactional output, ``send_offsets_to_transaction``)
as its own process until its commits cover every input, while one fault hits
a transaction that is certainly open (the worker stops itself right after
flushing it, the test breaks something, then lets it go on):

* SIGKILL of the transactional id's coordinator (the leader of its
  ``__transaction_state`` partition);
* SIGKILL of the leader of an output partition the transaction wrote;
* SIGSTOP of the producer past its ``transaction.timeout.ms``: the coordinator
  aborts the transaction, and once resumed the producer must be fenced or
  aborted, never committing that data late;
* a zombie: while the first instance is stopped with a transaction open, a
  second with the same ``transactional.id`` fences it and does all the work;
  the first, resumed, is refused.

``txn_checker`` then proves from the output log (both isolation levels) and the
group's offsets: one committed output per input, no aborted output visible to
read_committed, no transaction partly visible, and the offsets committed
exactly with their outputs.  The figures are printed (``-s``) and kept as
``figures`` properties.  One cluster serves the four cases, each on its own
topics, group and transactional id; a killed node is restarted and the
cluster whole again before the next case.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cluster.helpers import call, create_topic, node_metadata, wait_until
from tests.cluster.txn_checker import TxnId, TxnReport, check_transactions
from tests.cluster.workload import read_final_log

from samsa.testing.cluster import LocalCluster
from samsa.testing.process import LoggedProcess

ck = pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PARTITIONS = 3
INPUTS_PER_PARTITION = 40
BATCH = 8
STOP_AT = 3
"""The transaction each case breaks: some commits before it, many after."""
TIMEOUT_MS = 20_000
SHORT_TIMEOUT_MS = 1_500
"""The SIGSTOP case's transaction.timeout.ms (the coordinator checks every 200 ms)."""
WORKER = Path(__file__).with_name("txn_worker.py")
FIND_COORDINATOR = 10
DESCRIBE_TRANSACTIONS = 65


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(
        tmp_path_factory.mktemp("txn-faults"),
        controllers=3,
        settings={
            "transaction.state.log.num.partitions": "4",
            "transaction.state.log.replication.factor": "3",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
        },
    ) as c:
        c.start()
        try:
            yield c
        finally:
            for node_id, node in c.nodes.items():
                (c.base_dir / f"node-{node_id}.log").write_text(node.log_text())


@pytest.fixture
def make_case(cluster: LocalCluster) -> Iterator[Callable[[str], Case]]:
    """Cases whose workers are all ended (resumed, then killed) when the test ends."""
    cases: list[Case] = []

    def make(name: str) -> Case:
        cases.append(Case(cluster, name))
        return cases[-1]

    yield make
    for case in cases:
        for worker in case.workers:
            if worker.running:
                worker.resume()
                worker.kill()


class WorkerProcess(LoggedProcess):
    """One ``txn_worker`` instance; its stdout lines are its events."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__()
        self.instance: str = spec["instance"]
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self._add_log_line(line.rstrip("\n"))

    def events(self) -> str:
        """Its event lines and errors, without librdkafka's connection chatter."""
        return "\n".join(line for line in self.log_lines if not line.startswith("%"))

    def expect(self, text: str, timeout: float = 60) -> None:
        if not self.wait_for_log(text, timeout):
            raise AssertionError(f"{self.instance} never said {text!r}:\n{self.events()}")

    def wait_stopped_in(self, txn: int) -> None:
        """Until the worker has stopped itself with transaction ``txn`` open: it says
        so first, and only then sends itself SIGSTOP, so a SIGCONT sent on its word
        alone could come first and leave it stopped for good."""
        self.expect(f"open {txn} ")
        assert self.proc is not None
        stat = Path(f"/proc/{self.proc.pid}/stat")
        # The state is the field after the command name, which ends with ')'.
        wait_until(
            lambda: stat.read_text().rsplit(")", 1)[1].split()[0] == "T",
            30,
            f"{self.instance} to stop itself in transaction {txn}",
        )

    def exit_code(self, timeout: float = 90) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.resume()
            self.kill()
            raise AssertionError(f"{self.instance} did not finish:\n{self.events()}") from None

    def txns(self, event: str) -> set[TxnId]:
        return {
            (self.instance, int(line.split()[1]))
            for line in self.log_lines
            if line.startswith(event + " ")
        }


class Case:
    """One loop's topics, group and transactional id, its workers and its figures."""

    def __init__(self, cluster: LocalCluster, name: str) -> None:
        self.cluster = cluster
        self.name = name
        self.input = f"{name}-in"
        self.output = f"{name}-out"
        self.workers: list[WorkerProcess] = []
        self.never_committed: set[TxnId] = set()
        self.faults: list[str] = []
        # A node an earlier test restarted may still be starting: RF 3 needs it.
        wait_until(
            lambda: len(node_metadata(cluster, 1)["brokers"]) == len(cluster.nodes),
            60,
            "every broker registered and unfenced",
        )
        for topic in (self.input, self.output):
            create_topic(cluster.bootstrap, topic, PARTITIONS, 3, {"min.insync.replicas": "2"})
        producer = ck.Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True})
        for p in range(PARTITIONS):
            for i in range(INPUTS_PER_PARTITION):
                producer.produce(self.input, value=b"in-%d-%d" % (p, i), partition=p)
        assert producer.flush(30) == 0

    @property
    def transactional_id(self) -> str:
        return f"{self.name}-loop"

    def start(self, stop_at: int | None = None, timeout_ms: int = TIMEOUT_MS) -> WorkerProcess:
        spec = {
            "bootstrap": self.cluster.bootstrap_of(self.cluster.running()),
            "instance": f"w{len(self.workers) + 1}",
            "transactional_id": self.transactional_id,
            "group": f"{self.name}-group",
            "input": self.input,
            "output": self.output,
            "ends": {p: INPUTS_PER_PARTITION for p in range(PARTITIONS)},
            "batch": BATCH,
            "transaction_timeout_ms": timeout_ms,
            "stop_at": stop_at,
        }
        worker = WorkerProcess(spec)
        self.workers.append(worker)
        return worker

    def finish(self, worker: WorkerProcess) -> None:
        """Run instances until one has committed every input: a fenced instance
        (exit 3) is replaced by a new one, as an application would."""
        for _ in range(3):
            code = worker.exit_code()
            if code == 0:
                return
            assert code == 3, f"{worker.instance} exited {code}:\n{worker.log_text()}"
            worker = self.start()
        raise AssertionError(f"{self.name}: three instances fenced in a row")

    def coordinator(self, not_on: int = -1) -> int:
        def ask() -> int | None:
            for node in self.cluster.running():
                answer = call(
                    self.cluster.client_address(node),
                    FIND_COORDINATOR,
                    3,
                    {"key": self.transactional_id, "key_type": 1},
                )
                if answer["error_code"] == 0 and answer["node_id"] != not_on:
                    return int(answer["node_id"])
            return None

        return wait_until(ask, 30, f"the coordinator of {self.transactional_id}")

    def transaction_state(self) -> tuple[str, int]:
        """(state, producer epoch) as the coordinator describes the transactional id."""
        answer = call(
            self.cluster.client_address(self.coordinator()),
            DESCRIBE_TRANSACTIONS,
            0,
            {"transactional_ids": [self.transactional_id]},
        )
        state = answer["transaction_states"][0]
        return state["transaction_state"], state["producer_epoch"]

    def check(self, record_property: Callable[[str, Any], None]) -> TxnReport:
        bootstrap = self.cluster.bootstrap_of(self.cluster.running())
        reads = {
            level: [
                record
                for p in range(PARTITIONS)
                for record in read_final_log(bootstrap, self.output, PARTITIONS, 60, level)[p]
            ]
            for level in ("read_committed", "read_uncommitted")
        }
        reader = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"{self.name}-group"})
        try:
            stored = reader.committed(
                [ck.TopicPartition(self.input, p) for p in range(PARTITIONS)], 30
            )
        finally:
            reader.close()
        acknowledged = set().union(*(w.txns("committed") for w in self.workers))
        aborted = set().union(*(w.txns("aborted") for w in self.workers))
        report = check_transactions(
            {p: INPUTS_PER_PARTITION for p in range(PARTITIONS)},
            reads["read_committed"],
            reads["read_uncommitted"],
            {tp.partition: tp.offset for tp in stored},
            acknowledged,
            self.never_committed | aborted,
        )
        for line in [
            f"{self.name}: faults: {'; '.join(self.faults)}",
            f"{self.name}: {report.summary()}",
            f"{self.name}: instances: {len(self.workers)}, worker aborts: {len(aborted)}",
        ]:
            print(line)
            record_property("figures", line)
        assert report.ok, "\n".join(report.problems())
        return report


def wait_whole(cluster: LocalCluster) -> None:
    """Every partition of every topic led, its ISR all of its replicas, as node 1 sees it."""

    def whole() -> bool:
        topics = node_metadata(cluster, 1)["topics"]
        return bool(topics) and all(
            p["leader_id"] >= 0 and sorted(p["isr_nodes"]) == sorted(p["replica_nodes"])
            for t in topics
            for p in t["partitions"]
        )

    wait_until(whole, 60, "every partition whole again")


def output_leader(cluster: LocalCluster, topic: str, partition: int) -> int:
    for t in node_metadata(cluster, 1, [topic])["topics"]:
        for p in t["partitions"]:
            if p["partition_index"] == partition:
                return int(p["leader_id"])
    raise AssertionError(f"no leader for {topic}-{partition}")


def kill_and_restart(cluster: LocalCluster, case: Case, victim: int, why: str) -> threading.Event:
    """With the stopped worker's transaction open: SIGKILL ``victim``, let the
    worker go on and finish, then launch the node again (the check runs while
    it starts; ``heal`` waits for it)."""
    worker = case.workers[-1]
    worker.wait_stopped_in(STOP_AT)
    cluster.kill(victim)
    case.faults.append(f"SIGKILL node {victim} ({why}) with transaction {STOP_AT} open")
    worker.resume()
    case.finish(worker)
    return cluster.nodes[victim].launch()


def heal(cluster: LocalCluster, victim: int, ready: threading.Event) -> None:
    """The restarted node ready and every partition whole, for the next case."""
    cluster.nodes[victim].wait_ready(ready, 60)
    wait_whole(cluster)


def test_coordinator_killed_mid_transaction(
    cluster: LocalCluster,
    make_case: Callable[[str], Case],
    record_property: Callable[[str, Any], None],
) -> None:
    case = make_case("coordkill")
    case.start(stop_at=STOP_AT)
    victim = case.coordinator()
    ready = kill_and_restart(cluster, case, victim, "the transaction coordinator")
    case.check(record_property)
    heal(cluster, victim, ready)


def test_output_leader_killed_mid_transaction(
    cluster: LocalCluster,
    make_case: Callable[[str], Case],
    record_property: Callable[[str, Any], None],
) -> None:
    case = make_case("leaderkill")
    case.start(stop_at=STOP_AT)
    coordinator = case.coordinator()
    victim = next(
        leader
        for p in range(PARTITIONS)
        if (leader := output_leader(cluster, case.output, p)) != coordinator
    )
    ready = kill_and_restart(cluster, case, victim, "an output partition's leader")
    case.check(record_property)
    heal(cluster, victim, ready)


def test_producer_stopped_past_its_transaction_timeout(
    cluster: LocalCluster,
    make_case: Callable[[str], Case],
    record_property: Callable[[str, Any], None],
) -> None:
    case = make_case("timeout")
    worker = case.start(stop_at=STOP_AT, timeout_ms=SHORT_TIMEOUT_MS)
    worker.wait_stopped_in(STOP_AT)
    _, epoch = case.transaction_state()
    wait_until(
        lambda: (
            case.transaction_state()[1] > epoch
            and case.transaction_state()[0] in ("CompleteAbort", "Empty")
        ),
        30,
        "the coordinator to abort the timed-out transaction",
    )
    case.faults.append(f"SIGSTOP of the producer past transaction.timeout.ms={SHORT_TIMEOUT_MS}")
    case.never_committed.add((worker.instance, STOP_AT))
    worker.resume()
    case.finish(worker)
    assert (worker.instance, STOP_AT) not in worker.txns("committed")
    report = case.check(record_property)
    assert report.transactions_aborted >= 1


def test_zombie_fenced_by_a_new_instance(
    cluster: LocalCluster,
    make_case: Callable[[str], Case],
    record_property: Callable[[str, Any], None],
) -> None:
    case = make_case("zombie")
    zombie = case.start(stop_at=STOP_AT)
    zombie.wait_stopped_in(STOP_AT)
    case.never_committed.add((zombie.instance, STOP_AT))
    successor = case.start()
    successor.expect("ready")  # the zombie is fenced and its transaction aborted
    case.faults.append("a second instance fenced the first, stopped with a transaction open")
    case.finish(successor)
    zombie.resume()
    assert zombie.exit_code() == 3, zombie.log_text()
    zombie.expect(f"fatal {STOP_AT} ")
    assert not any(txn >= STOP_AT for _, txn in zombie.txns("committed"))
    report = case.check(record_property)
    assert report.transactions_aborted >= 1
