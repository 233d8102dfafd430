"""Transactions end to end: confluent-kafka's transactional producer against a real broker.

Commit and abort as read_committed and read_uncommitted consumers see them,
offsets sent to a transaction (visible to the group only on commit), fencing
of a zombie instance by a new one (its open transaction aborted), the abort
of a transaction open past its timeout, and a restart that must keep aborted
records hidden (the .txnindex and producer state come back from disk).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samsa.testing import BrokerProcess

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def txn_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(
        tmp_path_factory.mktemp("txn") / "data",
        {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"},
        args=["--metrics-listen", "127.0.0.1:0"],
    ) as proc:
        yield proc


def new_topic(bootstrap: str, partitions: int = 1) -> str:
    name = f"txn-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)
    return name


def producer(bootstrap: str, transactional_id: str, **extra: Any) -> Any:
    p = ck.Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 1}
        | extra
    )
    p.init_transactions(20)
    return p


def transaction(p: Any, topic: str, values: list[bytes], *, commit: bool) -> None:
    p.begin_transaction()
    for value in values:
        p.produce(topic, value=value, key=b"k")
    p.flush(10)
    if commit:
        p.commit_transaction(20)
    else:
        p.abort_transaction(20)


def read_all(
    bootstrap: str,
    topic: str,
    isolation: str,
    until: Callable[[list[bytes]], bool],
    timeout: float = 20,
) -> list[bytes]:
    """Values of partition 0 from the start, polled until ``until`` holds (or timeout)."""
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "isolation.level": isolation,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.assign([ck.TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while not until(values) and time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
    finally:
        c.close()
    return values


def stable_end(bootstrap: str, topic: str) -> int:
    """The end offset a read_committed consumer sees: the last stable offset."""
    c = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "lso", "isolation.level": "read_committed"}
    )
    try:
        return int(c.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10)[1])
    finally:
        c.close()


def test_commit_and_abort_as_each_isolation_level_sees_them(txn_broker: BrokerProcess) -> None:
    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    p = producer(bootstrap, f"tx-{topic}")
    transaction(p, topic, [b"c0", b"c1"], commit=True)
    transaction(p, topic, [b"a0", b"a1", b"a2"], commit=False)
    transaction(p, topic, [b"c2"], commit=True)
    committed = read_all(bootstrap, topic, "read_committed", lambda v: b"c2" in v)
    assert committed == [b"c0", b"c1", b"c2"]
    everything = read_all(bootstrap, topic, "read_uncommitted", lambda v: b"c2" in v)
    assert everything == [b"c0", b"c1", b"a0", b"a1", b"a2", b"c2"]
    # 6 records and 3 markers: the last stable offset is past the last marker.
    assert stable_end(bootstrap, topic) == 9


def test_an_open_transaction_holds_back_read_committed(txn_broker: BrokerProcess) -> None:
    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    p = producer(bootstrap, f"tx-{topic}")
    transaction(p, topic, [b"before"], commit=True)
    p.begin_transaction()
    p.produce(topic, value=b"open", key=b"k")
    p.flush(10)
    assert stable_end(bootstrap, topic) == 2, "the open transaction starts at offset 2"
    assert read_all(bootstrap, topic, "read_committed", lambda v: len(v) > 1, timeout=2) == [
        b"before"
    ]
    p.commit_transaction(20)
    assert read_all(bootstrap, topic, "read_committed", lambda v: len(v) == 2) == [
        b"before",
        b"open",
    ]


def test_offsets_sent_to_a_transaction_count_only_when_it_commits(
    txn_broker: BrokerProcess,
) -> None:
    bootstrap = txn_broker.bootstrap
    source, sink = new_topic(bootstrap), new_topic(bootstrap)
    group = f"g-{source}"
    seed = ck.Producer({"bootstrap.servers": bootstrap})
    for i in range(6):
        seed.produce(source, value=b"in%d" % i)
    seed.flush(10)
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    p = producer(bootstrap, f"tx-{sink}")
    try:
        consumer.subscribe([source])
        taken: list[Any] = []
        deadline = time.monotonic() + 20
        while len(taken) < 6 and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                taken.append(msg)
        assert len(taken) == 6
        # Aborted: outputs and offsets both dropped.
        p.begin_transaction()
        for msg in taken[:3]:
            p.produce(sink, value=b"out-" + msg.value())
        p.send_offsets_to_transaction(
            [ck.TopicPartition(source, 0, 3)], consumer.consumer_group_metadata(), 20
        )
        p.abort_transaction(20)
        assert _committed(consumer, source) < 0
        # Committed: both visible together.
        p.begin_transaction()
        for msg in taken:
            p.produce(sink, value=b"out-" + msg.value())
        p.send_offsets_to_transaction(
            [ck.TopicPartition(source, 0, 6)], consumer.consumer_group_metadata(), 20
        )
        p.commit_transaction(20)
        assert _committed(consumer, source) == 6
    finally:
        consumer.close()
    outputs = read_all(bootstrap, sink, "read_committed", lambda v: len(v) >= 6)
    assert outputs == [b"out-in%d" % i for i in range(6)]


def _committed(consumer: Any, topic: str) -> int:
    return int(consumer.committed([ck.TopicPartition(topic, 0)], timeout=10)[0].offset)


def test_a_new_instance_fences_the_zombie_and_aborts_its_transaction(
    txn_broker: BrokerProcess,
) -> None:
    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    transactional_id = f"tx-{topic}"
    zombie = producer(bootstrap, transactional_id)
    zombie.begin_transaction()
    zombie.produce(topic, value=b"zombie", key=b"k")
    zombie.flush(10)
    successor = producer(bootstrap, transactional_id)  # aborts the zombie's transaction
    transaction(successor, topic, [b"successor"], commit=True)
    with pytest.raises(ck.KafkaException) as fenced:
        zombie.produce(topic, value=b"late", key=b"k")
        zombie.commit_transaction(10)
    error = fenced.value.args[0]
    assert error.fatal() or error.txn_requires_abort(), error
    assert read_all(bootstrap, topic, "read_committed", lambda v: b"successor" in v) == [
        b"successor"
    ]


def test_a_transaction_open_past_its_timeout_is_aborted(txn_broker: BrokerProcess) -> None:
    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    p = producer(bootstrap, f"tx-{topic}", **{"transaction.timeout.ms": 1000})
    p.begin_transaction()
    p.produce(topic, value=b"stalled", key=b"k")
    p.flush(10)
    deadline = time.monotonic() + 20
    while stable_end(bootstrap, topic) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stable_end(bootstrap, topic) == 2, "the coordinator wrote an ABORT marker"
    assert read_all(bootstrap, topic, "read_committed", lambda v: False, timeout=1) == []


def test_aborted_records_stay_hidden_after_a_crash(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        topic = new_topic(broker.bootstrap)
        p = producer(broker.bootstrap, f"tx-{topic}")
        transaction(p, topic, [b"a0", b"a1"], commit=False)
        transaction(p, topic, [b"c0"], commit=True)
        p.flush(5)
        del p
        broker.kill()  # no clean shutdown: recovery rebuilds the state
        broker.start()
        bootstrap = broker.bootstrap
        values = read_all(bootstrap, topic, "read_committed", lambda v: b"c0" in v)
        assert values == [b"c0"]
        # The coordinator state survived too: the id goes on at a higher epoch.
        p = producer(bootstrap, f"tx-{topic}")
        transaction(p, topic, [b"c1"], commit=True)
        values = read_all(bootstrap, topic, "read_committed", lambda v: b"c1" in v)
        assert values == [b"c0", b"c1"]
    finally:
        broker.kill()


def test_samsa_transactions_shows_an_open_transaction_and_its_producer(
    txn_broker: BrokerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from samsa.cli.main import main

    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    transactional_id = f"tx-{topic}"
    p = producer(bootstrap, transactional_id)
    transaction(p, topic, [b"done"], commit=True)
    p.begin_transaction()
    p.produce(topic, value=b"open", key=b"k")
    p.flush(10)
    conn = ["--bootstrap-server", bootstrap, "--output", "json"]
    try:
        assert main(["transactions", "list", "--state", "Ongoing", *conn]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert transactional_id in [t["transactional_id"] for t in listed]
        assert {t["state"] for t in listed} == {"Ongoing"}

        assert (
            main(["transactions", "describe", "--transactional-id", transactional_id, *conn]) == 0
        )
        described = json.loads(capsys.readouterr().out)
        assert described["state"] == "Ongoing" and described["partitions"] == [[topic, 0]]

        args = ["transactions", "describe-producers", "--topic", topic, "--partition", "0"]
        assert main([*args, *conn]) == 0
        (state,) = json.loads(capsys.readouterr().out)
        assert state["producer_id"] == described["producer_id"]
        assert state["current_transaction_start_offset"] == 2, "after 'done' and its marker"

        assert main(["transactions", "describe", "--transactional-id", "nobody", *conn]) == 2
        assert "nobody" in capsys.readouterr().err
        assert main(["transactions", "list", "--state", "Sleeping", *conn]) == 2
        assert "Sleeping" in capsys.readouterr().err
    finally:
        p.abort_transaction(20)


def test_metrics_show_the_open_transaction_and_the_stable_lag(txn_broker: BrokerProcess) -> None:
    from tests.integration.test_metrics_endpoint import endpoint_url, scrape, value

    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    p = producer(bootstrap, f"tx-{topic}")
    transaction(p, topic, [b"done"], commit=True)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, value=b"open%d" % i, key=b"k")
    p.flush(10)
    url = endpoint_url(txn_broker, "metrics")
    try:
        samples = scrape(url)
        labels = {"topic": topic, "partition": "0"}
        assert value(samples, "samsa_log_last_stable_offset", **labels) == 2
        assert value(samples, "samsa_log_stable_lag", **labels) == 3
        assert value(samples, "samsa_log_open_transactions", **labels) == 1
        assert value(samples, "samsa_transactions", state="Ongoing") >= 1
    finally:
        p.abort_transaction(20)
    samples = scrape(url)
    assert value(samples, "samsa_log_stable_lag", topic=topic, partition="0") == 0


def test_a_transactional_write_to_a_partition_not_in_the_transaction_is_refused(
    txn_broker: BrokerProcess,
) -> None:
    """KIP-890 part 1: the leader asks the coordinator before a producer's first
    transactional batch opens a transaction on the partition; a late or rogue
    write (here: no AddPartitionsToTxn) would otherwise hold the LSO forever."""
    from tests.integration.test_bad_input import RawClient

    from samsa.errors import ErrorCode
    from samsa.protocol.batches.record_builder import RecordBatchBuilder

    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    transactional_id = f"raw-{topic}"
    client = RawClient(bootstrap)
    deadline = time.monotonic() + 20
    while True:  # the coordinator may still be loading
        init = client.call(
            22, 4, {"transactional_id": transactional_id, "transaction_timeout_ms": 60000}
        )
        if init["error_code"] == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert init["error_code"] == 0
    pid, epoch = init["producer_id"], init["producer_epoch"]

    def produce(sequence: int) -> int:
        builder = RecordBatchBuilder(
            producer_id=pid, producer_epoch=epoch, base_sequence=sequence, is_transactional=True
        )
        builder.append(1_000, b"k", b"v")
        body = {
            "transactional_id": transactional_id,
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": builder.build()}]}
            ],
        }
        return int(client.call(0, 9, body)["responses"][0]["partition_responses"][0]["error_code"])

    assert produce(0) == ErrorCode.INVALID_TXN_STATE, "not added to the transaction"
    assert stable_end(bootstrap, topic) == 0
    added = client.call(
        24,
        3,
        {
            "v3_and_below_transactional_id": transactional_id,
            "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": topic, "partitions": [0]}],
        },
    )
    assert (
        added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"]
        == 0
    )
    assert produce(0) == ErrorCode.NONE
    ended = client.call(
        26,
        3,
        {
            "transactional_id": transactional_id,
            "producer_id": pid,
            "producer_epoch": epoch,
            "committed": False,
        },
    )
    assert ended["error_code"] == 0
    client.close()


def test_aiokafka_transactional_producer(txn_broker: BrokerProcess) -> None:
    """Another client's transaction code (its own protocol versions and retries)."""
    import asyncio

    aiokafka = pytest.importorskip("aiokafka")
    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)

    async def write() -> None:
        p = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"aio-{topic}")
        await p.start()
        try:
            async with p.transaction():
                await p.send_and_wait(topic, b"committed", key=b"k")
            await p.begin_transaction()
            await p.send_and_wait(topic, b"aborted", key=b"k")
            await p.abort_transaction()
            async with p.transaction():
                await p.send_and_wait(topic, b"committed-too", key=b"k")
        finally:
            await p.stop()

    asyncio.run(asyncio.wait_for(write(), 60))
    values = read_all(bootstrap, topic, "read_committed", lambda v: b"committed-too" in v)
    assert values == [b"committed", b"committed-too"]


def test_kafka_python_transactional_producer(txn_broker: BrokerProcess) -> None:
    kafka = pytest.importorskip("kafka")
    if not hasattr(kafka.KafkaProducer, "init_transactions"):
        pytest.skip("this kafka-python has no transactions")
    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    p = kafka.KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"kp-{topic}")
    try:
        p.init_transactions()
        p.begin_transaction()
        p.send(topic, b"committed", key=b"k")
        p.commit_transaction()
        p.begin_transaction()
        p.send(topic, b"aborted", key=b"k")
        p.flush()
        p.abort_transaction()
    finally:
        p.close(5)
    assert stable_end(bootstrap, topic) == 4, "2 records and 2 markers, none open"
    values = read_all(bootstrap, topic, "read_committed", lambda v: False, timeout=5)
    assert values == [b"committed"]


def test_samsa_transactions_abort_ends_a_hanging_transaction(
    txn_broker: BrokerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from samsa.cli.main import main

    bootstrap = txn_broker.bootstrap
    topic = new_topic(bootstrap)
    p = producer(bootstrap, f"tx-{topic}")
    p.begin_transaction()
    p.produce(topic, value=b"hanging", key=b"k")
    p.flush(10)
    conn = ["--bootstrap-server", bootstrap]
    args = ["transactions", "describe-producers", "--topic", topic, "--partition", "0"]
    assert main([*args, *conn, "--output", "json"]) == 0
    (state,) = json.loads(capsys.readouterr().out)
    assert state["current_transaction_start_offset"] == 0 and stable_end(bootstrap, topic) == 0
    abort = ["transactions", "abort", "--topic", topic, "--partition", "0"]
    ids = [
        "--producer-id",
        str(state["producer_id"]),
        "--producer-epoch",
        str(state["producer_epoch"]),
    ]
    assert main([*abort, *ids, *conn]) == 0
    assert "Aborted" in capsys.readouterr().out
    assert stable_end(bootstrap, topic) == 2, "the record and the ABORT marker"
    assert read_all(bootstrap, topic, "read_committed", lambda v: False, timeout=2) == []
    # A stale producer epoch is refused with the broker's error, in one line.
    stale = ["--producer-id", str(state["producer_id"]), "--producer-epoch", "-5"]
    assert main([*abort, *stale, *conn]) == 2
    assert "INVALID_PRODUCER_EPOCH" in capsys.readouterr().err
    p.abort_transaction(20)
