"""``samsa cluster`` against real multi-process clusters: the real executable, its
output and its exit codes.

One LocalCluster (nodes 1-3 broker+controller, node 4 broker only) is shared by
the module; every test works on topics of its own, and the one that kills
node 4 runs last.  The add-voter test grows its own single-node install into
two voters and back.  Cases that fail before any broker is asked (a malformed
plan, a bad UUID) call ``main(argv)`` in process to stay fast.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from samsa.cli.main import main
from samsa.client.admin import Admin, NewTopic, TopicDescription
from samsa.client.metadata import TopicPartition
from samsa.client.producer import Producer
from samsa.errors import SamsaError
from samsa.testing import BrokerProcess
from samsa.testing.cluster import FAST_SETTINGS, LocalCluster, free_ports

T = TypeVar("T")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    nodes = LocalCluster(tmp_path_factory.mktemp("cluster-cli"), controllers=3, brokers=1)
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.close()


def samsa(bootstrap: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samsa.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "SAMSA_BOOTSTRAP": bootstrap},
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], prefix: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(prefix), err
    return err


def in_process_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def eventually(check: Callable[[], T | None], what: str, timeout: float = 20.0) -> T:
    """Retry ``check`` (an Admin call or a CLI run) until it returns a value, bounded."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = check()
        except (SamsaError, AssertionError) as exc:
            value, last = None, exc
        if value:
            return value
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s (last: {last})"
        time.sleep(0.05)


def status(bootstrap: str, *args: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(
        ok(samsa(bootstrap, "cluster", "status", "--output", "json", *args))
    )
    return result


def create_topic(cluster: LocalCluster, topic: NewTopic) -> TopicDescription:
    """Create, then wait until every running broker describes it: the CLI may ask any."""
    with Admin({"bootstrap.servers": cluster.bootstrap_of(cluster.running())}) as admin:
        admin.create_topics([topic], timeout=15)
    described = None
    for node_id in cluster.running():
        with Admin({"bootstrap.servers": cluster.bootstrap_of([node_id])}) as admin:
            described = eventually(
                lambda a=admin: a.describe_topics([topic.name], timeout=5)[topic.name],  # type: ignore[misc]
                f"broker {node_id} knows topic {topic.name}",
            )
    assert described is not None
    return described


def write_plan(path: Path, moves: dict[tuple[str, int], list[int]]) -> str:
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": t, "partition": p, "replicas": r} for (t, p), r in moves.items()
                ],
            }
        )
    )
    return str(path)


# -- status ----------------------------------------------------------------------------


def test_status_shows_the_quorum_the_brokers_and_partition_health(cluster: LocalCluster) -> None:
    # min.insync.replicas 3 on two replicas: every partition is under min ISR at once.
    create_topic(cluster, NewTopic("cli-health", 2, 2, {"min.insync.replicas": "3"}))
    table = ok(samsa(cluster.bootstrap, "cluster", "status"))
    assert "quorum leader" in table and "observer" in table and "follower" in table
    assert "Partitions" in table and "under min ISR" in table

    doc = status(cluster.bootstrap)
    assert doc["cluster_id"] == cluster.nodes[1].settings["cluster.id"]
    quorum = doc["quorum"]
    assert sorted(v["node_id"] for v in quorum["voters"]) == [1, 2, 3]
    assert [o["node_id"] for o in quorum["observers"]] == [4]
    assert quorum["leader_id"] in (1, 2, 3) and quorum["leader_epoch"] >= 1
    assert quorum["high_watermark"] > 0
    (leader,) = [v for v in quorum["voters"] if v["role"] == "leader"]
    assert leader["node_id"] == quorum["leader_id"] and leader["last_fetch_ms_ago"] == 0
    assert all(v["endpoints"][0].startswith("CONTROLLER://127.0.0.1:") for v in quorum["voters"])
    assert quorum["observers"][0]["directory_id"]  # a node formatted by Samsa has one
    assert [(b["node_id"], b["fenced"]) for b in doc["brokers"]] == [
        (1, False), (2, False), (3, False), (4, False),
    ]  # fmt: skip
    assert [b["port"] for b in doc["brokers"]] == [cluster.client_ports[i] for i in (1, 2, 3, 4)]
    health = doc["partitions"]
    assert {(p["topic"], p["partition"]) for p in health["under_min_isr"]} >= {
        ("cli-health", 0),
        ("cli-health", 1),
    }
    assert health["offline"] == [] and health["total"] >= 2


def test_status_and_remove_voter_errors_are_one_line(
    cluster: LocalCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    (nothing,) = free_ports(1)
    one_line_error(
        samsa(f"127.0.0.1:{nothing}", "cluster", "status", "--timeout", "1"),
        f"samsa cluster: cannot reach 127.0.0.1:{nothing}",
    )
    err = one_line_error(
        samsa(cluster.bootstrap, "cluster", "remove-voter", "--node-id", "9"),
        "samsa cluster: node 9 is not a voter",
    )
    assert "voters: 1, 2, 3" in err
    bad_uuid = ["cluster", "add-voter", "--node-id", "9", "--directory-id", "not-a-uuid",
                "--endpoint", "CONTROLLER://127.0.0.1:1"]  # fmt: skip
    assert "bad directory id 'not-a-uuid'" in in_process_error(bad_uuid, capsys)
    bad_endpoint = ["cluster", "add-voter", "--node-id", "9", "--directory-id",
                    "0b7e6c1a-6f5e-4c3b-9a1d-2e8f4c6a1b3d", "--endpoint", "127.0.0.1:1"]  # fmt: skip
    assert "expected NAME://HOST:PORT" in in_process_error(bad_endpoint, capsys)


# -- elections -------------------------------------------------------------------------


def test_elect_leaders_reports_not_needed_and_refuses_unknown_partitions(
    cluster: LocalCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    create_topic(cluster, NewTopic("cli-elect", 4, 2))
    args = ("cluster", "elect-leaders", "--election-type", "preferred", "--topic", "cli-elect")
    table = ok(samsa(cluster.bootstrap, *args))
    assert table.count("ELECTION_NOT_NEEDED") == 4 and "preferred replica already leads" in table
    rows = json.loads(ok(samsa(cluster.bootstrap, *args, "--partition", "1", "--output", "json")))
    assert rows == [
        {"topic": "cli-elect", "partition": 1, "result": "ELECTION_NOT_NEEDED",
         "error_message": "ELECTION_NOT_NEEDED (84): cli-elect-1"},
    ]  # fmt: skip
    one_line_error(
        samsa(cluster.bootstrap, "cluster", "elect-leaders", "--election-type", "unclean",
              "--topic", "no-such-topic"),
        "samsa cluster: unknown topic 'no-such-topic'",
    )  # fmt: skip
    one_line_error(
        samsa(cluster.bootstrap, *args, "--partition", "7"),
        "samsa cluster: unknown partition cli-elect-7",
    )
    err = in_process_error(
        ["cluster", "elect-leaders", "--election-type", "preferred", "--all-topic-partitions",
         "--partition", "1"], capsys,
    )  # fmt: skip
    assert err == "samsa cluster: --partition needs --topic"


# -- reassignment ----------------------------------------------------------------------


def test_reassign_dry_run_shows_current_and_proposed_and_changes_nothing(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    topic = create_topic(cluster, NewTopic("cli-dry", 1, 2))
    current = list(topic.partitions[0].replicas)
    spare = next(b for b in (1, 2, 3, 4) if b not in current)
    plan = write_plan(tmp_path / "plan.json", {("cli-dry", 0): [current[0], spare]})
    table = ok(samsa(cluster.bootstrap, "cluster", "reassign", "--plan", plan))
    assert "CURRENT" in table and "PROPOSED" in table and "Dry run" in table
    row = next(line.split() for line in table.splitlines() if line.startswith("cli-dry"))
    assert row == ["cli-dry", "0", ",".join(map(str, current)), f"{current[0]},{spare}",
                   str(spare), str(current[1])]  # fmt: skip
    doc = json.loads(ok(samsa(cluster.bootstrap, "cluster", "reassign", "--plan", plan, "--output", "json")))  # fmt: skip
    assert doc["executed"] is False
    assert doc["partitions"][0]["current"] == current
    assert doc["partitions"][0]["proposed"] == [current[0], spare]
    assert ok(samsa(cluster.bootstrap, "cluster", "reassign", "--list")).strip() == (
        "No partition reassignments in progress."
    )
    assert json.loads(ok(samsa(cluster.bootstrap, "cluster", "reassign", "--list", "--output", "json"))) == []  # fmt: skip


def test_reassign_to_an_unknown_broker_is_kafkas_error_in_one_line(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    topic = create_topic(cluster, NewTopic("cli-nobroker", 1, 2))
    current = list(topic.partitions[0].replicas)
    plan = write_plan(tmp_path / "plan.json", {("cli-nobroker", 0): [current[0], 99]})
    err = one_line_error(
        samsa(cluster.bootstrap, "cluster", "reassign", "--plan", plan, "--execute"),
        "samsa cluster: INVALID_REPLICA_ASSIGNMENT (39): reassign cli-nobroker-0:",
    )
    assert "99" in err
    unknown = write_plan(tmp_path / "unknown.json", {("no-such-topic", 0): [1, 2]})
    one_line_error(
        samsa(cluster.bootstrap, "cluster", "reassign", "--plan", unknown, "--execute"),
        "samsa cluster: unknown topic 'no-such-topic'",
    )
    with Admin({"bootstrap.servers": cluster.bootstrap}) as admin:
        assert admin.list_partition_reassignments(timeout=10) == {}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"version": 1, "partitions": [', "Expecting value at line 1 column 31"),
        ("[]", "the document must be an object"),
        ('{"version": 2, "partitions": []}', "version must be 1, not 2"),
        ('{"version": 1}', '"partitions" must be a non-empty list'),
        (
            '{"partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}',
            "partitions[0].partition must be",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}',
            "lists a broker twice",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": ["a"]}]}',
            "must hold broker ids",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["d"]}]}',
            "must hold absolute paths or \"any\", not 'd'",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": [1],'
            ' "log_dirs": ["/d", "any"]}]}',
            "partitions[0].log_dirs must be a list of 1 dirs, one per replica",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": [1]},'
            ' {"topic": "t", "partition": 0, "replicas": [2]}]}',
            "names t-0 a second time",
        ),
    ],
)
def test_malformed_plans_are_one_line(
    text: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(text)
    err = in_process_error(["cluster", "reassign", "--plan", str(plan), "--execute"], capsys)
    assert err.startswith(f"samsa cluster: malformed plan {plan}: ") and why in err, err


def test_reassign_flag_mistakes_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert in_process_error(["cluster", "reassign"], capsys).endswith(
        "needs --plan FILE (or --list)"
    )
    assert "--wait follows a reassignment" in in_process_error(
        ["cluster", "reassign", "--plan", "p.json", "--wait"], capsys
    )
    assert "cannot read plan missing.json" in in_process_error(
        ["cluster", "reassign", "--plan", "missing.json"], capsys
    )


def test_reassign_reorder_completes_and_preferred_election_follows(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """Reordering the replicas moves no data, so it completes at once: the preferred
    replica changes while the leader stays, and a preferred election moves it."""
    topic = create_topic(cluster, NewTopic("cli-reorder", 1, 2))
    first, second = topic.partitions[0].replicas
    plan = write_plan(tmp_path / "plan.json", {("cli-reorder", 0): [second, first]})
    out = ok(samsa(cluster.bootstrap, "cluster", "reassign", "--plan", plan, "--execute", "--wait"))
    assert "Rollback plan" in out and f'"replicas": [{first}, {second}]' in out
    assert "Reassignment of 1 partition(s) complete." in out
    elect = ("cluster", "elect-leaders", "--election-type", "preferred", "--topic", "cli-reorder")
    table = ok(samsa(cluster.bootstrap, *elect, "--partition", "0"))
    assert "ELECTED" in table.split() and "leader elected" in table
    with Admin({"bootstrap.servers": cluster.bootstrap}) as admin:
        eventually(
            lambda: admin.describe_topics(["cli-reorder"], timeout=5)["cli-reorder"]
            .partitions[0].leader == second,
            "the preferred replica leads",
        )  # fmt: skip


def test_reassign_moves_a_replica_with_its_data(cluster: LocalCluster, tmp_path: Path) -> None:
    """A real move: the added replica fetches the log, joins the ISR, the old one goes."""
    topic = create_topic(cluster, NewTopic("cli-move", 1, 2))
    kept, dropped = topic.partitions[0].replicas
    target = next(b for b in (1, 2, 3, 4) if b not in (kept, dropped))
    tp = TopicPartition("cli-move", 0)
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    try:
        for i in range(50):
            producer.send("cli-move", value=b"v%d" % i, partition=0)
        producer.flush(15)
    finally:
        producer.close()
    plan = write_plan(tmp_path / "plan.json", {("cli-move", 0): [kept, target]})
    try:
        out = ok(
            samsa(cluster.bootstrap, "cluster", "reassign", "--plan", plan, "--execute", "--wait",
                  "--timeout", "10")
        )  # fmt: skip
        assert "Reassignment of 1 partition(s) complete." in out
        assert f"cli-move-0: replicas {kept},{target} isr " in out, out
        with Admin({"bootstrap.servers": cluster.bootstrap}) as admin:
            sizes = admin.describe_log_dirs(["cli-move"], timeout=10)
        # The new replica copied the leader's log, byte for byte.
        assert sizes[target][tp] == sizes[kept][tp] > 0, sizes
    finally:
        with Admin({"bootstrap.servers": cluster.bootstrap}) as admin:
            if admin.list_partition_reassignments([tp], timeout=10):
                admin.alter_partition_reassignments({tp: None}, timeout=10)


# -- the quorum grows and shrinks ------------------------------------------------------


def test_add_voter_grows_a_single_node_install_and_remove_voter_shrinks_it(
    tmp_path: Path,
) -> None:
    first = BrokerProcess(tmp_path / "node-1", FAST_SETTINGS)
    first.start()
    second = None
    try:
        cluster_id = status(first.bootstrap)["cluster_id"]
        client_port, controller_port = free_ports(2)
        config = tmp_path / "node-2.properties"
        settings = {
            **FAST_SETTINGS,
            "process.roles": "broker,controller",
            "node.id": "2",
            "cluster.id": cluster_id,
            "controller.quorum.bootstrap.servers": first.bootstrap,
            "listeners": f"PLAINTEXT://127.0.0.1:{client_port},CONTROLLER://127.0.0.1:{controller_port}",
            "controller.listener.names": "CONTROLLER",
            "log.dirs": str(tmp_path / "node-2"),
        }
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        second = BrokerProcess(tmp_path / "node-2", port=None, args=["--config", str(config)])
        second.start()

        def observers() -> list[int]:
            return [o["node_id"] for o in status(first.bootstrap)["quorum"]["observers"]]

        eventually(lambda: observers() == [2], "node 2 follows the quorum as an observer")
        added = ok(samsa(first.bootstrap, "cluster", "add-voter", "--node-config", str(config)))
        assert added.startswith("Added node 2") and "voters: 1, 2" in added
        quorum = status(first.bootstrap)["quorum"]
        assert sorted(v["node_id"] for v in quorum["voters"]) == [1, 2]
        (voter2,) = [v for v in quorum["voters"] if v["node_id"] == 2]
        assert voter2["endpoints"] == [f"CONTROLLER://127.0.0.1:{controller_port}"]
        assert voter2["directory_id"]
        # Two voters now: a metadata change commits only with node 2's vote.
        ok(samsa(first.bootstrap, "topics", "create", "grown", "--partitions", "1"))
        one_line_error(
            samsa(first.bootstrap, "cluster", "add-voter", "--node-config", str(config)),
            "samsa cluster: node 2 is already a voter",
        )

        removed = ok(samsa(first.bootstrap, "cluster", "remove-voter", "--node-id", "2"))
        assert removed.strip() == "Removed node 2 from the voters; voters: 1."
        quorum = status(first.bootstrap)["quorum"]
        assert [v["node_id"] for v in quorum["voters"]] == [1]
        assert [o["node_id"] for o in quorum["observers"]] == [2]
    finally:
        for node in (second, first):
            if node is not None:
                node.kill()


# -- a broker dies (last: it changes the shared cluster) ----------------------------------


def test_a_killed_broker_shows_fenced_and_its_partitions_degraded(cluster: LocalCluster) -> None:
    topic = create_topic(cluster, NewTopic("cli-fenced", 4, 2))
    leader = status(cluster.bootstrap)["quorum"]["leader_id"]
    cluster.kill(4)
    assert cluster.nodes[leader].wait_for_log("fencing broker 4", timeout=15)
    survivors = cluster.bootstrap_of([1, 2, 3])

    def fenced() -> dict[str, Any] | None:
        doc = status(survivors)
        brokers = {b["node_id"]: b for b in doc["brokers"]}
        return doc if brokers[4]["fenced"] else None

    doc = eventually(fenced, "status shows broker 4 fenced")
    assert [b["node_id"] for b in doc["brokers"] if b["fenced"]] == [4]
    assert doc["brokers"][3]["observer"] is True and doc["brokers"][3]["host"] is None
    degraded = {(p["topic"], p["partition"]) for p in doc["partitions"]["under_replicated"]}
    on_4 = {("cli-fenced", p.partition) for p in topic.partitions if 4 in p.replicas}
    assert on_4 and on_4 <= degraded
    table = ok(samsa(survivors, "cluster", "status"))
    assert any(line.split()[:2] == ["4", "-"] and "fenced" in line for line in table.splitlines())

    # Its partitions' preferred leader is gone: the election fails, readably.
    (preferred_4,) = [p.partition for p in topic.partitions if p.replicas[0] == 4]
    result = samsa(survivors, "cluster", "elect-leaders", "--election-type", "preferred",
                   "--topic", "cli-fenced", "--partition", str(preferred_4))  # fmt: skip
    one_line_error(result, "samsa cluster: 1 of 1 elections failed; ")
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["cluster"],
        ["cluster", "status"],
        ["cluster", "add-voter"],
        ["cluster", "remove-voter"],
        ["cluster", "elect-leaders"],
        ["cluster", "reassign"],
    ],
)
def test_every_cluster_help_has_an_example(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    _, found, after = capsys.readouterr().out.partition("example")
    assert found and "samsa cluster " in after


def test_status_without_a_quorum_still_shows_brokers_and_partitions(cluster: LocalCluster) -> None:
    """Two of the three controllers die, so no leader can be elected; the surviving
    broker still answers Metadata from its image, and the forwarded DescribeQuorum
    (asked last) finds no controller: status shows the rest, quorum marked unavailable."""
    create_topic(cluster, NewTopic("cli-no-quorum", 1, 1))
    cluster.kill(2)
    cluster.kill(3)
    survivor = cluster.bootstrap_of([1])

    def leaderless() -> dict[str, Any] | None:
        doc = status(survivor, "--timeout", "2")
        return doc if "error" in doc["quorum"] else None

    doc = eventually(leaderless, "status reports the quorum unavailable")
    assert doc["brokers"] and doc["partitions"]["total"] > 0
    table = ok(samsa(survivor, "cluster", "status", "--timeout", "2"))
    assert "Metadata quorum unavailable: " in table and "Brokers" in table
