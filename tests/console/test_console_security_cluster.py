"""The console's security on three nodes, reached through a node that does not
lead ``secret``: the same answers as on one node, since the checks run on the
node the request reaches, with the ACLs every node replays from the metadata
log, and the Kafka requests it forwards (CreateTopics, CreatePartitions to the
controller) are made as the user only once the user may make them.

The nodes log in to each other as admin (a super user, as Kafka requires);
their client listener (named PLAINTEXT, mapped to SASL_PLAINTEXT) is the
console's login listener.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka.admin import AclOperation, AdminClient
from tests.console.secured import (
    Console,
    check_actions_refused,
    check_alice_without_acls,
    check_anonymous,
    console_url,
    grant,
    kafka_conf,
    kafka_state,
    plain_jaas,
    prepare_data,
    revoke,
    security_settings,
    topic_names,
    wait_for,
)

from samsa.testing.cluster import LocalCluster

pytestmark = pytest.mark.timeout(300)
expect = playwright_api.expect


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    settings = {
        "listener.security.protocol.map": "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "sasl.mechanism.controller.protocol": "PLAIN",
        "sasl.jaas.config": plain_jaas("admin"),
        "console.listen": "127.0.0.1:0",
        **security_settings("PLAINTEXT"),
    }
    with LocalCluster(tmp_path_factory.mktemp("secured-cluster"), settings=settings) as nodes:
        nodes.start(timeout=120)
        prepare_data(nodes.bootstrap, replication_factor=3)
        yield nodes


def leader_of_secret(cluster: LocalCluster) -> int:
    admin = AdminClient(kafka_conf(cluster.bootstrap, "admin"))
    return int(admin.list_topics("secret", timeout=30).topics["secret"].partitions[0].leader)


def test_through_a_node_that_does_not_lead_the_partition(cluster: LocalCluster) -> None:
    address = cluster.bootstrap
    untouched = kafka_state(address)
    leader = leader_of_secret(cluster)
    other = next(n for n in sorted(cluster.nodes) if n != leader)
    there = Console(console_url(cluster.nodes[other]))
    at_leader = Console(console_url(cluster.nodes[leader]))

    check_anonymous(there)
    alice = there.login("alice")
    check_alice_without_acls(alice)
    assert kafka_state(address) == untouched

    grant(address, "alice", "secret", AclOperation.READ)
    try:
        wait_for(lambda: "secret" in topic_names(alice), "the ACL reaches the non-leader")
        assert alice.get("/api/topics/secret").status == 200
        # Records are served by the leader: here the read is allowed and says where...
        browsed = alice.get("/api/topics/secret/messages?from=oldest&partition=0")
        assert browsed.status == 200 and browsed.body["records"] == []
        assert f"led by broker {leader}" in browsed.body["partitions"][0]["error"]
        # ... and the leader's console shows them to her.
        alice_at_leader = at_leader.login("alice")
        wait_for(lambda: "secret" in topic_names(alice_at_leader), "the ACL reaches the leader")
        shown = alice_at_leader.get("/api/topics/secret/messages?from=oldest&partition=0")
        assert [r["offset"] for r in shown.body["records"]] == [0, 1, 2]
        check_actions_refused(alice)
        assert kafka_state(address) == untouched
    finally:
        revoke(address, "alice", "secret", AclOperation.READ)
    wait_for(lambda: "secret" not in topic_names(alice), "secret is hidden from alice again")

    admin = there.login("admin")
    assert {"secret", "public"} <= set(topic_names(admin))
    assert admin.get("/api/cluster").body["quorum"]["available"]
    created = admin.post("/api/actions/create-topic", {"name": "admin-made", "partitions": 1})
    assert created.status == 200, created.body  # forwarded to the controller
    grown = admin.post("/api/actions/add-partitions", {"topic": "admin-made", "count": 2})
    assert grown.status == 200, grown.body
    # Allowed, but not the leader here: Kafka's own answer, not a refusal.
    produce = {"topic": "secret", "partition": 0, "key": "k3", "value": "by admin"}
    elsewhere = admin.post("/api/actions/produce", produce)
    assert elsewhere.status == 503 and "NOT_LEADER_OR_FOLLOWER" in elsewhere.error
    produced = at_leader.login("admin").post("/api/actions/produce", produce)
    assert produced.status == 200 and produced.body["offset"] == 3
    after = kafka_state(address)
    assert after.watermarks == (0, 4) and after.topics == untouched.topics


def test_in_chromium_through_the_non_leader(cluster: LocalCluster, browser: Any, page: Any) -> None:
    other = next(n for n in sorted(cluster.nodes) if n != leader_of_secret(cluster))
    url = console_url(cluster.nodes[other])
    browser.clear_cookies()
    page.goto(url)
    for name in ("alice", "admin"):
        expect(page.locator("#login")).to_be_visible()
        page.locator("#login input[name=username]").fill(name)
        page.locator("#login input[name=password]").fill(f"{name}-pw")
        page.locator("#login button").click()
        expect(page.locator("#user-name")).to_have_text(f"User:{name}")
        expect(page.locator('#topics tr[data-topic="public"]')).to_have_count(1)
        expect(page.locator('#topics tr[data-topic="secret"]')).to_have_count(
            1 if name == "admin" else 0
        )
        page.goto(f"{url}#/topics/secret")
        if name == "alice":
            expect(page.locator("#error")).to_contain_text("DESCRIBE on TOPIC secret")
        else:
            expect(page.locator("#partitions tbody tr")).to_have_count(2)
        page.locator("#logout").click()
        page.goto(url)
