"""Tiered storage in one broker with the filesystem store (issue 34, must-show 1 and 5).

One broker for the module, started as a laptop user would turn tiering on:
``remote.log.storage.system.enable=true`` and nothing else about the store
(the test settings only make the tasks run every 200 ms).  Each test uses its
own topics.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource
from tests.cli.test_cli_tools import samsa
from tests.integration.test_metrics_endpoint import endpoint_url, scrape, value
from tests.kafka_tools.conftest import KafkaTools
from tests.kafka_tools.tool_classes import CONSOLE_CONSUMER, GET_OFFSETS, VERIFIABLE_CONSUMER
from tests.tiered.broker_tiering import (
    BROKER_SETTINGS,
    EARLIEST,
    EARLIEST_LOCAL,
    LATEST_TIERED,
    create_topic,
    list_offset,
    local_segments,
    metadata_events,
    produce,
    read_all,
    wait_for,
    wait_tiered,
)

from samsa.testing import BrokerProcess
from samsa.testing.kafka_reference import KafkaReference
from samsa.tiered.metadata import (
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
)

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    settings = {
        **BROKER_SETTINGS,
        "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
        # A secret the describe test checks is never shown (the store ignores it).
        "rsm.config.storage.aws.secret.access.key": "not-shown-anywhere",
    }
    with BrokerProcess(
        tmp_path_factory.mktemp("one-node") / "data",
        settings,
        args=["--metrics-listen", "127.0.0.1:0"],
    ) as proc:
        yield proc


def remote_dir(broker: BrokerProcess) -> Path:
    return broker.data_dir.parent / f"{broker.data_dir.name}-remote"


def test_every_record_from_offset_zero_after_local_retention(
    broker: BrokerProcess, kafka_reference: KafkaReference
) -> None:
    """confluent-kafka, Kafka's console consumer and VerifiableConsumer read from offset 0 although
    only the active segment is still local: every record, in order, byte for
    byte; ListOffsets -2/-4/-5 say where each tier starts and ends."""
    topic = "history"
    create_topic(broker.bootstrap, topic)
    sent = produce(broker.bootstrap, topic, 600)
    local_start, tiered_end = wait_tiered(broker.bootstrap, topic, broker.data_dir / f"{topic}-0")
    assert local_segments(broker.data_dir / f"{topic}-0") == [local_start]
    assert list(remote_dir(broker).rglob("*.log")), "no segment object in the store"

    assert read_all(broker.bootstrap, topic, len(sent)) == sent

    assert list_offset(broker.bootstrap, topic, EARLIEST) == (0, 0, 0)
    assert list_offset(broker.bootstrap, topic, EARLIEST_LOCAL) == (0, local_start, 0)
    assert list_offset(broker.bootstrap, topic, LATEST_TIERED) == (0, tiered_end, 0)

    tools = KafkaTools(kafka_reference, broker.bootstrap)
    shown = tools.props(
        CONSOLE_CONSUMER, "print.key=true", "print.offset=true", "print.headers=true"
    )
    consumed = tools.admin(
        CONSOLE_CONSUMER,
        "--topic",
        topic,
        "--from-beginning",
        "--max-messages",
        str(len(sent)),
        *shown,
    )
    assert consumed.splitlines() == [
        f"Offset:{r.offset}\tn:{r.headers[0][1].decode()}\t{r.key.decode()}\t{r.value.decode()}"
        for r in sent
    ]
    verified = tools.run(
        VERIFIABLE_CONSUMER,
        *("--bootstrap-server", broker.bootstrap, "--topic", topic, "--group-id", "verifier"),
        *("--reset-policy", "earliest", "--max-messages", str(len(sent)), "--verbose"),
    )
    records = [e for e in map(json.loads, verified.splitlines()) if e["name"] == "record_data"]
    assert [(e["offset"], e["key"], e["value"]) for e in records] == [
        (r.offset, r.key.decode(), r.value.decode()) for r in sent
    ]
    described = samsa(broker, "topics", "describe", topic, "--output", "json")
    assert described.returncode == 0, described.stderr
    [partition] = json.loads(described.stdout)[0]["partitions"]
    local_size = (broker.data_dir / f"{topic}-0" / f"{local_start:020d}.log").stat().st_size
    remote_size = sum(p.stat().st_size for p in remote_dir(broker).rglob(f"{topic}-*/**/*.log"))
    assert partition["log_start_offset"] == 0
    assert partition["local_log_start_offset"] == local_start
    assert partition["tiered_end_offset"] == tiered_end
    assert (partition["size_bytes"], partition["remote_size_bytes"]) == (local_size, remote_size)
    table = samsa(broker, "topics", "describe", topic).stdout
    assert "LOCAL-START" in table and "REMOTE-SIZE" in table
    offsets = tools.admin(GET_OFFSETS, "--topic", topic, "--time", "-4")
    assert offsets.split() == [f"{topic}:0:{local_start}"]
    offsets = tools.admin(GET_OFFSETS, "--topic", topic, "--time", "-5")
    assert offsets.split() == [f"{topic}:0:{tiered_end}"]


def test_remote_metrics(broker: BrokerProcess) -> None:
    """Kafka's remote-storage metrics, Samsa's names: what was copied and read
    back, the copy lag once it caught up, the remote log's size."""
    topic = "metered"
    create_topic(broker.bootstrap, topic)
    sent = produce(broker.bootstrap, topic, 300)
    wait_tiered(broker.bootstrap, topic, broker.data_dir / f"{topic}-0")
    remote_size = sum(p.stat().st_size for p in remote_dir(broker).rglob(f"{topic}-*/**/*.log"))
    assert read_all(broker.bootstrap, topic, len(sent)) == sent
    samples = scrape(endpoint_url(broker, "metrics"))
    assert value(samples, "samsa_remote_copy_bytes_total", topic=topic) == remote_size
    assert value(samples, "samsa_remote_copy_errors_total", topic=topic) == 0
    assert value(samples, "samsa_remote_log_size_bytes", topic=topic) == remote_size
    assert value(samples, "samsa_remote_copy_lag_segments", topic=topic) == 0
    assert value(samples, "samsa_remote_fetch_bytes_total", topic=topic) >= remote_size
    assert value(samples, "samsa_remote_fetch_requests_total", topic=topic) > 0
    assert value(samples, "samsa_remote_log_metadata_not_ready_partitions") == 0
    assert value(samples, "samsa_remote_log_metadata_replay_timeouts_total") == 0


def test_timestamps_and_read_committed_from_the_remote_tier(broker: BrokerProcess) -> None:
    """A timestamp in a remote segment is found through its remote time index,
    and a read_committed consumer reading the remote tier skips an aborted
    transaction there."""
    import confluent_kafka as ck

    topic = "txn-history"
    create_topic(broker.bootstrap, topic)
    first = produce(broker.bootstrap, topic, 100)
    producer = ck.Producer(
        {"bootstrap.servers": broker.bootstrap, "transactional.id": "tiered-txn"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(50):
        producer.produce(topic, key=b"aborted", value=b"aborted-%d" % i)
    producer.flush(30)
    producer.abort_transaction(30)
    producer.begin_transaction()
    for i in range(50):
        producer.produce(topic, key=b"committed", value=b"committed-%d" % i)
    producer.commit_transaction(30)
    last = produce(broker.bootstrap, topic, 200, start=100)
    local_start, _ = wait_tiered(broker.bootstrap, topic, broker.data_dir / f"{topic}-0")
    assert local_start > last[0].offset, "the transactions are not all in the remote tier"

    consumer = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "ts"})
    try:
        wanted = first[37]
        [found] = consumer.offsets_for_times([TopicPartition(topic, 0, wanted.timestamp)], 10)
        assert found.offset == wanted.offset
    finally:
        consumer.close()

    committed = read_all(
        broker.bootstrap, topic, 100 + 50 + 200, **{"isolation.level": "read_committed"}
    )
    values = [r.value for r in committed]
    assert not [v for v in values if v.startswith(b"aborted")]
    assert values[:100] == [r.value for r in first]
    assert values[100:150] == [b"committed-%d" % i for i in range(50)]
    assert values[150:] == [r.value for r in last]


def test_settings_are_described_with_kafka_sources(broker: BrokerProcess) -> None:
    """Broker and topic settings with Kafka's names, sources and synonyms; the
    store's secret is sensitive (no value anywhere)."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    entries = admin.describe_configs([resource])[resource].result(10)
    system = entries["remote.log.storage.system.enable"]
    assert (system.value, system.source, system.is_read_only) == (
        "true",
        ConfigResource.Type.BROKER.value and 4,  # STATIC_BROKER_CONFIG
        True,
    )
    wait = entries["remote.fetch.max.wait.ms"]
    assert (wait.value, wait.is_default, wait.is_read_only) == ("500", True, False)
    secret = entries["rsm.config.storage.aws.secret.access.key"]
    assert secret.is_sensitive and secret.value is None
    assert all(s.value is None for s in secret.synonyms.values())
    assert entries["rlmm.config.remote.log.metadata.topic.num.partitions"].value == "3"

    create_topic(broker.bootstrap, "described", extra={"local.retention.ms": "60000"})
    resource = ConfigResource(ConfigResource.Type.TOPIC, "described")
    topic = admin.describe_configs([resource])[resource].result(10)
    assert topic["remote.storage.enable"].value == "true"
    local = topic["local.retention.ms"]
    assert (local.value, local.source) == ("60000", 1)  # DYNAMIC_TOPIC_CONFIG
    assert "log.local.retention.ms" in local.synonyms
    assert topic["remote.log.copy.disable"].value == "false"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"local.retention.ms": "7200000", "retention.ms": "3600000"}, "must not be more than"),
        ({"local.retention.bytes": "-1", "retention.bytes": "1000"}, "must not be -1"),
        ({"cleanup.policy": "compact"}, "only supports topics with cleanup.policy=delete"),
    ],
)
def test_topic_rules_are_kafkas(
    broker: BrokerProcess, config: dict[str, str], message: str
) -> None:
    from confluent_kafka.admin import NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    name = f"bad-{abs(hash(tuple(config.items())))}"
    future = admin.create_topics(
        [NewTopic(name, 1, 1, config={"remote.storage.enable": "true", **config})]
    )[name]
    with pytest.raises(Exception, match=message):
        future.result(10)


def test_disabling_needs_delete_and_then_deletes_the_remote_data(broker: BrokerProcess) -> None:
    """KIP-950: turning remote storage off without remote.log.delete.on.disable
    is refused; with it, the remote segments go and the log start moves to the
    local start."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    topic = "disabled"
    create_topic(broker.bootstrap, topic)
    produce(broker.bootstrap, topic, 300)
    local_start, _ = wait_tiered(broker.bootstrap, topic, broker.data_dir / f"{topic}-0")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})

    def alter(**values: str) -> object:
        resource = ConfigResource(
            ConfigResource.Type.TOPIC,
            topic,
            incremental_configs=[
                ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
                for k, v in values.items()
            ],
        )
        return admin.incremental_alter_configs([resource])[resource].result(10)

    with pytest.raises(Exception, match="invalid to disable remote storage without deleting"):
        alter(remote_storage_enable="false")
    alter(remote_storage_enable="false", remote_log_delete_on_disable="true")
    prefix = next(p for p in remote_dir(broker).iterdir() if p.name.startswith(f"{topic}-"))
    wait_for(lambda: not list(prefix.rglob("*.log")), 30, "the remote segments to be deleted")
    wait_for(
        lambda: list_offset(broker.bootstrap, topic, EARLIEST)[1] == local_start,
        30,
        "the log start to move to the local start",
    )
    assert list_offset(broker.bootstrap, topic, LATEST_TIERED)[1] == -1


def test_total_retention_and_topic_deletion_remove_remote_segments(
    broker: BrokerProcess,
) -> None:
    """DeleteRecords moves the log start; remote segments wholly below it go,
    and deleting the topic removes the rest."""
    topic = "expiring"
    create_topic(broker.bootstrap, topic)
    produce(broker.bootstrap, topic, 400)
    wait_tiered(broker.bootstrap, topic, broker.data_dir / f"{topic}-0")
    prefix = next(p for p in remote_dir(broker).iterdir() if p.name.startswith(f"{topic}-"))
    before = sorted(int(p.name.split("-")[0]) for p in prefix.rglob("*.log"))
    assert len(before) >= 3
    cut = before[2]
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    deleted = admin.delete_records([TopicPartition(topic, 0, cut)])
    deleted[TopicPartition(topic, 0, cut)].result(10)
    wait_for(
        lambda: sorted(int(p.name.split("-")[0]) for p in prefix.rglob("*.log")) == before[2:],
        30,
        "the remote segments below the new log start to be deleted",
    )
    assert list_offset(broker.bootstrap, topic, EARLIEST)[1] == cut
    admin.delete_topics([topic])[topic].result(10)
    wait_for(
        lambda: not [p for p in prefix.rglob("*") if p.is_file()],
        30,
        "the topic's remote objects to be deleted",
    )
    S, P = RemoteLogSegmentState, RemotePartitionDeleteState

    def deletion_recorded() -> bool:
        """Every segment of the topic DELETE_SEGMENT_FINISHED, the partition's
        delete STARTED then FINISHED (published after the objects went)."""
        events = [
            e for e in metadata_events(broker.bootstrap, 3) if e.topic_id_partition.topic == topic
        ]
        deletes = [e.state for e in events if isinstance(e, RemotePartitionDeleteMetadata)]
        started = {e.segment_id for e in events if isinstance(e, RemoteLogSegmentMetadata)}
        finished = {
            e.segment_id
            for e in events
            if isinstance(e, RemoteLogSegmentMetadataUpdate)
            and e.state is S.DELETE_SEGMENT_FINISHED
        }
        return (
            deletes == [P.DELETE_PARTITION_STARTED, P.DELETE_PARTITION_FINISHED]
            and started == finished
        )

    wait_for(deletion_recorded, 30, "the deletion's records in __remote_log_metadata")


def test_a_restart_keeps_the_remote_tier(broker: BrokerProcess) -> None:
    """After a restart the log start still counts the remote tier (the logs load
    before the topic configs arrive), the remote data is read as before and
    nothing already copied is copied again."""
    topic = "restarted"
    create_topic(broker.bootstrap, topic)
    sent = produce(broker.bootstrap, topic, 300)
    local_start, tiered_end = wait_tiered(broker.bootstrap, topic, broker.data_dir / f"{topic}-0")
    objects = sorted(p.name for p in remote_dir(broker).rglob(f"{topic}-*/**/*.log"))
    broker.restart()
    assert list_offset(broker.bootstrap, topic, EARLIEST) == (0, 0, 0)
    assert list_offset(broker.bootstrap, topic, EARLIEST_LOCAL)[1] == local_start
    more = produce(broker.bootstrap, topic, 300, start=300)
    wait_tiered(broker.bootstrap, topic, broker.data_dir / f"{topic}-0")
    assert read_all(broker.bootstrap, topic, 600) == sent + more
    after = sorted(p.name for p in remote_dir(broker).rglob(f"{topic}-*/**/*.log"))
    assert after[: len(objects)] == objects, "a segment copied before the restart changed"
    starts = [int(name.split("-")[0]) for name in after]
    assert len(starts) == len(set(starts)), "a segment was copied twice"
    assert list_offset(broker.bootstrap, topic, LATEST_TIERED)[1] > tiered_end
