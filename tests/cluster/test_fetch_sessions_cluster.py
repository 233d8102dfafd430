"""Followers fetch in incremental sessions (KIP-227) on a three-node cluster.

With 1,000 idle partitions at replication factor 3 every node follows about
667 of them from two leaders.  Without sessions each idle fetch names all of
its partitions and hears about all of them; with sessions it names none and
hears nothing.  The test reads the bytes each node's replica fetchers sent
and received (``samsa_replica_fetch_bytes`` on /metrics) over an idle window
and compares them with ONE full request: the window holds many fetches
(one per ``replica.fetch.wait.max.ms``), so sessionless fetching would send
several times that.  Then it checks replication still works: ``acks=all``
writes are all readable, in order, and every ISR stays whole -- never shrunk
(``samsa_isr_shrinks``), although the window is longer than twice
``replica.lag.time.max.ms`` and the leaders read none of the idle partitions
in it: their followers' session fetches still prove them caught up.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from tests.cluster.helpers import create_topic_eventually
from tests.integration.test_metrics_endpoint import endpoint_url, scrape, value

from samsa.protocol.api import encode_request
from samsa.testing.cluster import LocalCluster, node_metadata, wait_until

TOPIC = "idle"
PARTITIONS = 1000
WINDOW_S = 5.0
"""Over twice the cluster's replica.lag.time.max.ms (2 s)."""
BUSY = 10
RECORDS_PER_BUSY = 20


def full_fetch_size(follower: int, partitions: list[int]) -> int:
    """Bytes of a sessionless follower Fetch v12 naming ``partitions``."""
    body = {
        "cluster_id": None,
        "replica_id": follower,
        "max_wait_ms": 200,
        "min_bytes": 1,
        "max_bytes": 10 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": TOPIC,
                "partitions": [
                    {
                        "partition": p,
                        "current_leader_epoch": 0,
                        "fetch_offset": 0,
                        "last_fetched_epoch": -1,
                        "log_start_offset": 0,
                        "partition_max_bytes": 1 << 20,
                    }
                    for p in partitions
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    return len(encode_request(1, 12, 1, f"samsa-replica-fetcher-{follower}", body))


def partitions_of(cluster: LocalCluster) -> list[dict]:
    [topic] = node_metadata(cluster, 1, [TOPIC])["topics"]
    return topic["partitions"]


def all_in_sync(cluster: LocalCluster) -> bool:
    parts = partitions_of(cluster)
    return len(parts) == PARTITIONS and all(len(p["isr_nodes"]) == 3 for p in parts)


def isr_shrinks(urls: dict[int, str]) -> float:
    total = 0.0
    for url in urls.values():
        samples = scrape(url)
        assert ("samsa_isr_shrinks_total", ()) in samples
        total += value(samples, "samsa_isr_shrinks_total")
    return total


def fetch_bytes(urls: dict[int, str]) -> dict[int, tuple[float, float]]:
    out = {}
    for node_id, url in urls.items():
        samples = scrape(url)
        out[node_id] = (
            value(samples, "samsa_replica_fetch_bytes_total", direction="sent"),
            value(samples, "samsa_replica_fetch_bytes_total", direction="received"),
        )
    return out


@pytest.mark.timeout(600)  # its own waits allow 360 s for 1,000 partitions x 3 replicas
def test_idle_followers_fetch_almost_nothing_and_replication_stays_correct(
    tmp_path: Path,
) -> None:
    with LocalCluster(tmp_path, settings={"metrics.listen": "127.0.0.1:0"}) as cluster:
        cluster.start()
        create_topic_eventually(
            cluster.bootstrap, TOPIC, 120, partitions=PARTITIONS, replication_factor=3
        )
        wait_until(lambda: all_in_sync(cluster), 180, "every ISR whole")
        urls = {n: endpoint_url(cluster.nodes[n], "metrics") for n in cluster.nodes}
        # Each node leads about a third and has a session per follower.
        wait_until(
            lambda: all(value(scrape(u), "samsa_fetch_sessions") >= 2 for u in urls.values()),
            60,
            "follower sessions on every leader",
        )

        parts = partitions_of(cluster)
        full = {
            follower: sum(
                full_fetch_size(
                    follower,
                    [
                        p["partition_index"]
                        for p in parts
                        if p["leader_id"] == leader and follower in p["replica_nodes"]
                    ],
                )
                for leader in cluster.nodes
                if leader != follower
            )
            for follower in cluster.nodes
        }
        shrinks = isr_shrinks(urls)
        before = fetch_bytes(urls)
        started = time.monotonic()
        time.sleep(WINDOW_S)  # a measurement window, not a wait for an event
        after = fetch_bytes(urls)
        elapsed = time.monotonic() - started
        for node_id in cluster.nodes:
            sent = after[node_id][0] - before[node_id][0]
            received = after[node_id][1] - before[node_id][1]
            print(
                f"node {node_id}: {sent / elapsed:.0f} B/s sent, {received / elapsed:.0f} B/s "
                f"received while idle; one full fetch round is {full[node_id]} B"
            )
            # Sessionless, the window's ~15 fetch rounds would send 15x this.
            assert 0 < sent < full[node_id]
            assert received < full[node_id]

        # Replication is still exact: acks=all writes to some partitions all read back.
        producer = Producer(
            {"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True}
        )
        for i in range(BUSY * RECORDS_PER_BUSY):
            producer.produce(TOPIC, b"%d" % i, partition=i % BUSY)
        assert producer.flush(60) == 0
        consumer = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap,
                "group.id": "check",
                "enable.auto.commit": False,
            }
        )
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(BUSY)])
        got: dict[int, list[int]] = {p: [] for p in range(BUSY)}
        deadline = time.monotonic() + 60
        while sum(map(len, got.values())) < BUSY * RECORDS_PER_BUSY:
            assert time.monotonic() < deadline, f"read only {got}"
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                got[message.partition()].append(int(message.value()))
        consumer.close()
        for p, values in got.items():
            assert values == list(range(p, BUSY * RECORDS_PER_BUSY, BUSY))
        # Every follower copied them: the high watermark reached the end with ISRs whole.
        wait_until(lambda: all_in_sync(cluster), 30, "every ISR whole after the writes")
        assert isr_shrinks(urls) == shrinks
