"""The registry on three nodes (issue 35's must-show 3): written through one node and read
through another; the primary SIGKILLed while registrations go on through the others; a
paused primary woken with stale state unable to write; no schema id handed out twice, and
the ``_schemas`` log agrees."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from confluent_kafka import Consumer, TopicPartition
from tests.registry.served import avro_record, call, registry_url

from samsa.testing.cluster import LocalCluster, wait_until

pytestmark = pytest.mark.integration

SETTINGS = {
    "registry.listen": "127.0.0.1:0",
    "registry.group.session.timeout.ms": "3000",
    "registry.timeout.ms": "30000",
}
FAILOVER_S = 60.0
ISSUED: dict[str, int] = {}
"""Every id the registry answered a registration with, by subject, across this module."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    directory = tmp_path_factory.mktemp("registry-cluster")
    with LocalCluster(directory, controllers=3, settings=SETTINGS) as c:
        c.start()
        try:
            yield c
        finally:
            for node_id, node in c.nodes.items():
                (directory / f"node-{node_id}.log").write_text(node.log_text())


def claiming(cluster: LocalCluster) -> list[int]:
    """The running nodes whose registry last said it is the primary (a paused one still does)."""
    found = []
    for node_id in cluster.running():
        said = re.findall(
            r"schema registry: the primary is (\S+)", cluster.nodes[node_id].log_text()
        )
        if said and said[-1] == "this":
            found.append(node_id)
    return found


def primary_of(cluster: LocalCluster) -> int | None:
    found = claiming(cluster)
    return found[0] if len(found) == 1 else None


def schema_for(subject: str) -> str:
    return avro_record(subject.replace("-", "_"), ("a", "int"))


def register(url: str, subject: str) -> bool:
    answer = call(
        url, "POST", f"/subjects/{subject}/versions", {"schema": schema_for(subject)}, timeout=60
    )
    if answer.status != 200:
        return False
    ISSUED[subject] = int(answer.json()["id"])
    return True


def check_ids_against_the_log(cluster: LocalCluster, bootstrap: str) -> None:
    """Every id answered is its own, and the committed ``_schemas`` records say the same."""
    assert len(set(ISSUED.values())) == len(ISSUED), ISSUED
    log = schemas_log(bootstrap)
    assert all(len(texts) == 1 for texts in log.values()), log
    for subject, schema_id in ISSUED.items():
        (text,) = log[schema_id]
        assert json.loads(text)["name"] == subject.replace("-", "_")


def schemas_log(bootstrap: str) -> dict[int, set[str]]:
    """Schema id -> every schema text a committed SCHEMA record of ``_schemas`` gives it."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "log-check",
            "isolation.level": "read_committed",
        }
    )
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition("_schemas", 0), timeout=30)
        consumer.assign([TopicPartition("_schemas", 0, 0)])
        found: dict[int, set[str]] = {}
        for _ in range(300):
            # the position passes the commit markers, which are never handed out
            (position,) = consumer.position([TopicPartition("_schemas", 0)])
            if position.offset >= end:
                break
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            key = json.loads(message.key())
            if key.get("keytype") == "SCHEMA" and message.value() is not None:
                value = json.loads(message.value())
                found.setdefault(value["id"], set()).add(value["schema"])
        else:
            raise AssertionError(f"_schemas not read to its end ({end}) in a minute")
        return found
    finally:
        consumer.close()


@pytest.mark.timeout(240)
def test_writes_anywhere_reads_anywhere_and_the_primary_dies(cluster: LocalCluster) -> None:
    urls = {node_id: registry_url(node) for node_id, node in cluster.nodes.items()}
    wait_until(lambda: primary_of(cluster), 60, "a registry primary")

    # Through node 1, read through node 3 (whichever is primary: the others forward).
    for i in range(3):
        assert register(urls[1], f"n1-{i}")
    for subject, schema_id in list(ISSUED.items()):
        wait_until(
            lambda s=subject, i=schema_id: call(urls[3], "GET", f"/subjects/{s}/versions/latest").json().get("id") == i,
            30,
            f"{subject} read through node 3",
        )  # fmt: skip
    for node_id in (2, 3):
        assert register(urls[node_id], f"n{node_id}-0")

    # SIGKILL the primary; registrations go on through the others.
    old_primary = primary_of(cluster)
    assert old_primary is not None
    cluster.kill(old_primary)
    survivors = [n for n in sorted(cluster.nodes) if n != old_primary]
    wait_until(
        lambda: register(urls[survivors[0]], "after-0"), FAILOVER_S, "a registration after the kill"
    )
    for i, node_id in enumerate(survivors * 2):
        assert register(urls[node_id], f"after-{i + 1}")
    new_primary = wait_until(lambda: primary_of(cluster), 30, "the new primary")
    assert new_primary != old_primary
    check_ids_against_the_log(cluster, cluster.bootstrap_of(survivors))

    # The killed node comes back, replays _schemas, and serves the same ids.
    lines = len(cluster.nodes[old_primary].log_lines)
    cluster.nodes[old_primary].start(timeout=60)
    back = registry_url(cluster.nodes[old_primary], since=lines)
    for subject, schema_id in list(ISSUED.items()):
        wait_until(
            lambda s=subject, i=schema_id: call(back, "GET", f"/subjects/{s}/versions/1").json().get("id") == i,
            30,
            f"{subject} on the restarted node",
        )  # fmt: skip
    assert register(back, "back-0")
    check_ids_against_the_log(cluster, cluster.bootstrap)


def send_raw(url: str, subject: str) -> socket.socket:
    """Send a registration without waiting for its answer (the node may be paused)."""
    parts = urlsplit(url)
    body = json.dumps({"schema": schema_for(subject)}).encode()
    sock = socket.create_connection((parts.hostname or "", parts.port or 80), timeout=90)
    head = (
        f"POST /subjects/{subject}/versions HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/vnd.schemaregistry.v1+json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


def read_raw(sock: socket.socket) -> tuple[int, bytes]:
    data = b""
    with sock:
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.timeout(240)
def test_a_paused_primary_that_wakes_up_cannot_write(cluster: LocalCluster) -> None:
    """SIGSTOP the primary until another node is primary and has written; then wake it
    with a registration already waiting in its socket.  Its state is stale and it may
    still believe it is primary, but its writer's epoch was bumped: its transaction is
    refused and never read, and the registration is answered by the new primary (or
    refused).  Either way no id is given twice."""
    urls = {node_id: registry_url(node) for node_id, node in cluster.nodes.items()}
    paused = wait_until(lambda: primary_of(cluster), 60, "one registry primary")
    cluster.pause(paused)
    try:
        new = wait_until(
            lambda: next((n for n in claiming(cluster) if n != paused), None), 60, "a new primary"
        )
        assert register(urls[new], "during-pause")
        waiting = send_raw(urls[paused], "stale-write")
    finally:
        cluster.resume(paused)
    status, body = read_raw(waiting)
    if status == 200:
        ISSUED["stale-write"] = json.loads(body)["id"]
    else:
        assert status >= 500, body
    check_ids_against_the_log(cluster, cluster.bootstrap)
    # the woken node goes back to forwarding: a write through it lands once
    wait_until(lambda: register(urls[paused], "after-wake"), 60, "a write through the woken node")
    check_ids_against_the_log(cluster, cluster.bootstrap)
