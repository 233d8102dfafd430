"""Tiered storage on three nodes with replication factor 3 against a real S3 server (issue 34).

One cluster for the module, its remote tier a bucket of the session's S3Proxy
(``samsa.testing.object_store``).  Each test uses its own topic:

* every record read from offset 0 once only the active segment is local, on
  the leader and on the followers, with -2/-4/-5 right;
* a follower whose log is gone rebuilds its state from the remote tier
  (OFFSET_MOVED_TO_TIERED_STORAGE) instead of fetching what is tiered;
* the leader is killed while it copies: the new leader continues from the
  remote metadata, re-uploads nothing that finished and leaves no gap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from tests.kafka_tools.conftest import KafkaTools
from tests.kafka_tools.tool_classes import CONSOLE_CONSUMER
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

from samsa.testing.cluster import LocalCluster, node_metadata
from samsa.testing.kafka_reference import KafkaReference
from samsa.testing.object_store import S3Server
from samsa.tiered.metadata import (
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
)

pytestmark = pytest.mark.timeout(420)

METADATA_PARTITIONS = 3


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server
) -> Iterator[LocalCluster]:
    bucket = s3_server.create_bucket()
    settings = {
        **BROKER_SETTINGS,
        "rsm.config.storage.backend.class": "s3",
        "rsm.config.storage.s3.bucket.name": bucket,
        "rsm.config.storage.s3.endpoint.url": s3_server.endpoint,
        "rsm.config.storage.s3.path.style.access.enabled": "true",
        "rsm.config.storage.s3.bulk.delete.enabled": "false",
        "rsm.config.storage.aws.access.key.id": s3_server.access_key,
        "rsm.config.storage.aws.secret.access.key": s3_server.secret_key,
        "rsm.config.key.prefix": "tiered/",
    }
    with LocalCluster(tmp_path_factory.mktemp("tiered-cluster"), settings=settings) as made:
        made.start(timeout=120)
        yield made


def partition_state(cluster: LocalCluster, topic: str) -> tuple[int, list[int]]:
    """(leader, ISR) of the topic's partition 0, as node 1 sees it... or any live node."""
    for node_id, node in cluster.nodes.items():
        if node.proc is None or node.proc.poll() is not None:
            continue
        answer = node_metadata(cluster, node_id, [topic])
        entry = answer["topics"][0]["partitions"][0]
        return entry["leader_id"], sorted(entry["isr_nodes"])
    raise AssertionError("no node is running")


def partition_dir(cluster: LocalCluster, node_id: int, topic: str) -> Path:
    return cluster.nodes[node_id].data_dir / f"{topic}-0"


def finished_segments(cluster: LocalCluster, topic: str) -> tuple[dict[int, int], Counter[int]]:
    """Per start offset of the topic's segments that finished copying, its end
    offset; and how many copies of each start offset were started."""
    events = [
        e
        for e in metadata_events(cluster.bootstrap, METADATA_PARTITIONS)
        if e.topic_id_partition.topic == topic
    ]
    segments = {e.segment_id: e for e in events if isinstance(e, RemoteLogSegmentMetadata)}
    started = Counter(e.start_offset for e in segments.values())
    finished = {
        segments[e.segment_id].start_offset: segments[e.segment_id].end_offset
        for e in events
        if isinstance(e, RemoteLogSegmentMetadataUpdate)
        and e.state is RemoteLogSegmentState.COPY_SEGMENT_FINISHED
    }
    return finished, started


def test_every_record_from_offset_zero_on_three_nodes(
    cluster: LocalCluster, kafka_reference: KafkaReference
) -> None:
    """confluent-kafka and Kafka's console consumer read every record from
    offset 0 through the leader's remote tier; the followers' local retention
    followed the leader's copies (they replay the remote metadata)."""
    topic = "history3"
    create_topic(cluster.bootstrap, topic, replication_factor=3)
    wait_for(lambda: partition_state(cluster, topic)[1] == [1, 2, 3], 30, "a full ISR")
    sent = produce(cluster.bootstrap, topic, 600)
    leader, _ = partition_state(cluster, topic)
    address = cluster.client_address(leader)
    local_start, tiered_end = wait_tiered(address, topic, partition_dir(cluster, leader, topic))

    assert read_all(cluster.bootstrap, topic, len(sent)) == sent
    tools = KafkaTools(kafka_reference, cluster.bootstrap)
    consumed = tools.admin(
        CONSOLE_CONSUMER,
        *("--topic", topic, "--from-beginning", "--max-messages", str(len(sent))),
        *tools.props(CONSOLE_CONSUMER, "print.key=true", "print.offset=true"),
    )
    assert consumed.splitlines() == [
        f"Offset:{r.offset}\t{r.key.decode()}\t{r.value.decode()}" for r in sent
    ]
    assert list_offset(address, topic, EARLIEST)[:2] == (0, 0)
    assert list_offset(address, topic, EARLIEST_LOCAL)[:2] == (0, local_start)
    assert list_offset(address, topic, LATEST_TIERED)[:2] == (0, tiered_end)
    followers = [n for n in cluster.nodes if n != leader]
    for follower in followers:  # they learn what is copied from the replayed metadata
        wait_for(
            partial(_only_segment, partition_dir(cluster, follower, topic), local_start),
            30,
            f"node {follower} to keep only the active segment",
        )
    finished, started = finished_segments(cluster, topic)
    assert set(started.values()) == {1}
    assert _contiguous(finished) == tiered_end


def test_a_follower_without_its_log_rebuilds_from_the_remote_tier(cluster: LocalCluster) -> None:
    topic = "rebuilt3"
    create_topic(cluster.bootstrap, topic, replication_factor=3)
    wait_for(lambda: partition_state(cluster, topic)[1] == [1, 2, 3], 30, "a full ISR")
    sent = produce(cluster.bootstrap, topic, 500)
    leader, _ = partition_state(cluster, topic)
    address = cluster.client_address(leader)
    local_start, _ = wait_tiered(address, topic, partition_dir(cluster, leader, topic))
    follower = next(n for n in sorted(cluster.nodes) if n != leader)
    cluster.nodes[follower].stop()
    for path in sorted(partition_dir(cluster, follower, topic).iterdir()):
        path.unlink()
    partition_dir(cluster, follower, topic).rmdir()
    cluster.start([follower], timeout=120)
    wait_for(
        lambda: any(
            "rebuilt from remote segment" in line for line in cluster.nodes[follower].log_lines
        ),
        60,
        f"node {follower} to rebuild {topic} from the remote tier",
    )
    wait_for(
        lambda: partition_state(cluster, topic)[1] == [1, 2, 3], 60, "the ISR to be full again"
    )
    assert local_segments(partition_dir(cluster, follower, topic))[0] == local_start
    # It can lead: the epochs and producers at its local start came from the remote tier.
    more = produce(cluster.bootstrap, topic, 20, start=500)
    assert read_all(cluster.bootstrap, topic, len(sent) + 20) == sent + more


def test_leader_killed_mid_copy_the_new_leader_continues(cluster: LocalCluster) -> None:
    """The leader copies slowly (a copy quota of its own) and is killed after
    some segments finished: the new leader resumes after the last finished
    one, no finished segment is copied twice and the remote tier has no gap."""
    topic = "failover3"
    create_topic(cluster.bootstrap, topic, replication_factor=3)
    wait_for(lambda: partition_state(cluster, topic)[1] == [1, 2, 3], 30, "a full ISR")
    leader, _ = partition_state(cluster, topic)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    resource = ConfigResource(
        ConfigResource.Type.BROKER,
        str(leader),
        incremental_configs=[
            ConfigEntry(
                "remote.log.manager.copy.max.bytes.per.second",
                "1500",
                incremental_operation=AlterConfigOpType.SET,
            )
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(10)
    sent = produce(cluster.bootstrap, topic, 800)
    address = cluster.client_address(leader)
    wait_for(
        lambda: list_offset(address, topic, LATEST_TIERED)[1] > 0,
        60,
        "the first segments copied by the slow leader",
    )
    before, _ = finished_segments(cluster, topic)
    last_rolled = local_segments(partition_dir(cluster, leader, topic))[-1]
    assert before and max(before.values()) < last_rolled - 1, "the leader copied it all already"
    cluster.nodes[leader].kill()
    wait_for(lambda: partition_state(cluster, topic)[0] not in (leader, -1), 30, "a new leader")
    new_leader, _ = partition_state(cluster, topic)
    new_address = cluster.client_address(new_leader)
    local_start, tiered_end = wait_tiered(
        new_address, topic, partition_dir(cluster, new_leader, topic)
    )

    finished, started = finished_segments(cluster, topic)
    assert _contiguous(finished) == tiered_end == local_start - 1
    assert all(started[start] == 1 for start in before), "a finished segment was copied again"
    assert read_all(cluster.bootstrap, topic, len(sent)) == sent


def _only_segment(directory: Path, base: int) -> bool:
    return local_segments(directory) == [base]


def _contiguous(finished: dict[int, int]) -> int:
    """The end of the remote tier when its finished segments start at 0 and
    follow one another without a gap or an overlap (else an AssertionError)."""
    expected = 0
    for start in sorted(finished):
        assert start == expected, f"remote segments {sorted(finished.items())}: gap or overlap"
        expected = finished[start] + 1
    return expected - 1
