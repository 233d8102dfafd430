"""The console on a broker with SASL users and ACLs: every read and action as the
logged-in user, through the broker's authorizer (issue 33).

One broker for the module: a SASL_PLAINTEXT listener with PLAIN users (admin,
the super user, and alice) and a SCRAM user from the metadata log (carol),
StandardAuthorizer, the console logging users in on that listener with
actions on, and ``/metrics`` taking the same users by Basic authentication.
The matrix runs over the JSON API and in Chromium; every refused request is
followed by a look with confluent-kafka that nothing changed.
"""

from __future__ import annotations

import base64
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AclOperation, AdminClient
from tests.console.secured import (
    ACTIONS,
    FAILED_LOGIN_DELAY_MS,
    GROUP,
    SECRET_RECORDS,
    Console,
    check_actions_refused,
    check_alice_without_acls,
    check_anonymous,
    console_url,
    grant,
    kafka_conf,
    kafka_state,
    prepare_data,
    revoke,
    security_settings,
    topic_names,
    wait_for,
)
from tests.security.acl_broker import free_port

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.timeout(240)
expect = playwright_api.expect


@dataclass
class Secured:
    proc: BrokerProcess
    address: str
    url: str
    metrics_url: str

    def console(self, source: str = "127.0.0.1") -> Console:
        return Console(self.url, source=source)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    port = free_port()
    settings = {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port},PLAINTEXT://127.0.0.1:0",
        "inter.broker.listener.name": "PLAINTEXT",
        "console.listen": "127.0.0.1:0",
        "metrics.listen": "127.0.0.1:0",
        "metrics.login.listener": "SASL_PLAINTEXT",
        **security_settings("SASL_PLAINTEXT"),
    }
    proc = BrokerProcess(tmp_path_factory.mktemp("console-secured") / "data", settings, port=None)
    proc.start(timeout=90)
    try:
        address = f"127.0.0.1:{port}"
        prepare_data(address)
        assert proc.wait_for_log("metrics listening on http://", 30)
        metrics = re.search(r"metrics listening on (http://\S+/)", proc.log_text())
        assert metrics is not None
        yield Secured(proc, address, console_url(proc), metrics.group(1))
    finally:
        proc.stop()
        proc.kill()


@pytest.fixture(scope="module")
def untouched(secured: Secured) -> Any:
    """The topics, partitions, watermarks and group offsets before any test."""
    return kafka_state(secured.address)


def test_anonymous_gets_401_everywhere_but_the_login_page(secured: Secured, untouched: Any) -> None:
    check_anonymous(secured.console())
    assert kafka_state(secured.address) == untouched


def test_the_anonymous_requests_of_the_issue_are_refused_and_change_nothing(
    secured: Secured, untouched: Any
) -> None:
    """Issue 33's list, replayed without credentials: listing ``secret``, its
    records, a group's offsets, the cluster; creating a topic, producing a
    forged record into ``secret``, adding partitions to it, deleting its
    records, rewinding another user's group."""
    anonymous = secured.console()
    for path in ("/api/topics", "/api/topics/secret/messages?from=oldest", f"/api/groups/{GROUP}"):
        reply = anonymous.get(path)
        assert reply.status == 401 and b"launch code" not in str(reply.body).encode()
    assert anonymous.get("/api/cluster").status == 401
    for name, body in ACTIONS.items():
        assert anonymous.post(f"/api/actions/{name}", body).status == 401
    # A forged cookie is no session either.
    forged = Console(secured.url, "samsa_session_1=forged")
    assert forged.post("/api/actions/produce", ACTIONS["produce"]).status == 401
    assert kafka_state(secured.address) == untouched
    assert not any("console action" in line and " done " in line for line in secured.proc.log_lines)


def test_alice_without_acls_on_secret_sees_none_of_it(secured: Secured, untouched: Any) -> None:
    alice = secured.console().login("alice")
    check_alice_without_acls(alice)
    # Her rates count only what she may see: public's two records, not secret's three.
    assert alice.get("/api/rates").body["records_in"] == 2
    # The SCRAM user of the metadata log logs in too, and sees no topic at all.
    carol = secured.console().login("carol", mechanism="SCRAM-SHA-512")
    assert topic_names(carol) == []
    assert carol.get("/api/whoami").body["principal"] == "User:carol"
    assert kafka_state(secured.address) == untouched
    # Each refused action is logged with its user and address.
    assert any(
        re.search(r"console action produce .* by User:alice from 127\.0\.0\.1:\d+ refused", line)
        for line in secured.proc.log_lines
    )


def test_alice_with_read_on_secret_reads_its_records_and_may_change_nothing(
    secured: Secured, untouched: Any
) -> None:
    alice = secured.console().login("alice")
    grant(secured.address, "alice", "secret", AclOperation.READ)
    try:
        wait_for(lambda: "secret" in topic_names(alice), "alice's topic list shows secret")
        page = alice.get("/api/topics/secret")
        assert page.status == 200 and page.body["partition_count"] == 2
        messages = alice.get("/api/topics/secret/messages?from=oldest&partition=0")
        assert messages.status == 200
        shown = [(r["key"]["text"], r["value"]["text"]) for r in messages.body["records"]]
        assert shown == [(k.decode(), v.decode()) for k, v in SECRET_RECORDS]
        check_actions_refused(alice)
        assert kafka_state(secured.address) == untouched
    finally:
        revoke(secured.address, "alice", "secret", AclOperation.READ)
    wait_for(lambda: "secret" not in topic_names(alice), "secret is hidden from alice again")


def test_admin_sees_and_does_everything(secured: Secured, untouched: Any) -> None:
    admin = secured.console().login("admin")
    assert {"secret", "public"} <= set(topic_names(admin))
    cluster = admin.get("/api/cluster")
    assert cluster.status == 200 and cluster.body["quorum"]["available"]
    group = admin.get(f"/api/groups/{GROUP}")
    assert group.status == 200 and group.body["partitions"][0]["committed_offset"] == 2
    assert admin.get("/api/topics/secret").body["configs"]  # DescribeConfigs answers him
    assert len(admin.get("/api/topics/secret/messages?from=oldest").body["records"]) == 3

    def act(name: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = admin.post(f"/api/actions/{name}", body)
        assert reply.status == 200, (name, reply.body)
        return dict(reply.body)

    act("create-topic", {"name": "admin-made", "partitions": 1})
    act("add-partitions", {"topic": "admin-made", "count": 2})
    assert act("produce", {"topic": "admin-made", "key": "a", "value": "1"})["offset"] == 0
    act("produce", {"topic": "admin-made", "key": "b", "value": "2"})
    assert (
        act("delete-records", {"topic": "admin-made", "partition": 0, "offset": 1})["low_watermark"]
        == 1
    )
    act(
        "reset-offsets",
        {"group": GROUP, "topic": "secret", "partition": 0, "to": "offset", "offset": 1},
    )
    consumer = Consumer({**kafka_conf(secured.address, "admin"), "group.id": GROUP})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition("admin-made", 0), timeout=30)
        assert (low, high) == (1, 2)
        assert consumer.committed([TopicPartition("secret", 0)], timeout=30)[0].offset == 1
        consumer.commit(offsets=[TopicPartition("secret", 0, 2)], asynchronous=False)
    finally:
        consumer.close()
    admin_client = AdminClient(kafka_conf(secured.address, "admin"))
    assert len(admin_client.list_topics(timeout=30).topics["admin-made"].partitions) == 2
    assert any(
        re.search(
            r"console action create-topic name='admin-made' by User:admin from 127\.0\.0\.1:\d+: done",
            line,
        )
        for line in secured.proc.log_lines
    )


def test_logout_ends_the_session(secured: Secured) -> None:
    admin = secured.console().login("admin")
    assert admin.get("/api/topics").status == 200
    reply = admin.post("/api/logout", {})
    assert reply.status == 200 and "Max-Age=0" in reply.headers["set-cookie"]
    assert admin.get("/api/topics").status == 401


def test_a_wrong_host_and_a_cross_site_post_are_refused(secured: Secured, untouched: Any) -> None:
    admin = secured.console().login("admin")
    for path in ("/", "/api/topics", "/api/login"):
        reply = admin.get(path, Host="evil.example:8080")
        assert reply.status == 421, (path, reply.status)
    assert admin.get("/api/topics", Host="localhost").status == 200
    # A page of another site posting with the user's browser: the cookie is
    # SameSite=Strict (not sent), its Origin is not the console's, and a form
    # cannot send JSON.
    anonymous = secured.console()
    assert anonymous.post("/api/actions/produce", ACTIONS["produce"]).status == 401
    cross = admin.post("/api/actions/produce", ACTIONS["produce"], Origin="https://evil.example")
    assert cross.status == 403 and "cross-site" in cross.error
    as_form = admin.call(
        "POST",
        "/api/actions/produce",
        headers={"Content-Type": "text/plain"},
    )
    assert as_form.status == 415
    login_form = anonymous.post(
        "/api/login", {"username": "admin", "password": "admin-pw"}, Origin="https://evil.example"
    )
    assert login_form.status == 403
    assert kafka_state(secured.address) == untouched


def test_guessing_passwords_is_slowed(secured: Secured) -> None:
    """From its own loopback address, so the back-off slows no other test."""
    guesser = secured.console(source="127.0.0.2")
    wrong = {"username": "alice", "password": "guess-1"}
    first = guesser.post("/api/login", wrong)
    assert first.status == 401
    assert first.seconds >= FAILED_LOGIN_DELAY_MS / 1000  # as a failed SASL login waits
    # Inside the back-off even the right password is refused at once.
    right = {"username": "alice", "password": "alice-pw"}
    blocked = guesser.post("/api/login", right)
    assert blocked.status == 429 and blocked.headers["retry-after"] == "1"
    assert blocked.seconds < FAILED_LOGIN_DELAY_MS / 1000
    # Another address is not slowed.
    assert secured.console(source="127.0.0.3").login("alice").cookie
    wait_for(lambda: guesser.post("/api/login", wrong).status == 401, "the first back-off ends", 10)
    doubled = guesser.post("/api/login", right)
    assert doubled.status == 429 and doubled.headers["retry-after"] == "2"
    assert secured.proc.wait_for_log("console login failed for user 'alice' from 127.0.0.2")


def test_metrics_take_the_broker_users_and_need_describe_on_the_cluster(secured: Secured) -> None:
    def scrape(user: str | None) -> tuple[int, bytes]:
        request = urllib.request.Request(secured.metrics_url + "metrics")
        if user is not None:
            token = base64.b64encode(f"{user}:{user}-pw".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    status, _ = scrape(None)
    assert status == 401
    status, body = scrape("alice")
    assert status == 403 and b"DESCRIBE on CLUSTER kafka-cluster" in body
    status, body = scrape("admin")
    assert status == 200 and b"samsa_" in body


def test_new_settings_show_in_describe_configs(secured: Secured) -> None:
    from confluent_kafka.admin import ConfigResource

    admin = AdminClient(kafka_conf(secured.address, "admin"))
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    configs = admin.describe_configs([resource])[resource].result(30)
    assert configs["console.login.listener"].value == "SASL_PLAINTEXT"
    assert configs["console.allow.remote.anonymous"].value == "false"
    assert configs["console.session.max.lifetime.ms"].value == "28800000"
    assert configs["metrics.login.listener"].value == "SASL_PLAINTEXT"
    assert configs["console.ssl.key.password"].is_sensitive


# ---------------------------------------------------------------- in Chromium


def log_in(page: Any, url: str, name: str, password: str) -> None:
    page.goto(url)
    expect(page.locator("#login")).to_be_visible()
    page.locator("#login input[name=username]").fill(name)
    page.locator("#login input[name=password]").fill(password)
    page.locator("#login button").click()
    expect(page.locator("#user-name")).to_have_text(f"User:{name}")


def test_in_chromium_each_user_sees_what_the_acls_give(
    secured: Secured, browser: Any, page: Any
) -> None:
    browser.clear_cookies()
    page.goto(secured.url)
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#login select[name=mechanism] option")).to_have_count(3)
    page.locator("#login input[name=username]").fill("alice")
    page.locator("#login input[name=password]").fill("wrong")
    page.locator("#login button").click()
    expect(page.locator("#login-result")).to_contain_text("login failed")
    # The failure made this address back off: a right password clears it once
    # the back-off ends (as the page's next attempt would).
    right = {"username": "alice", "password": "alice-pw"}
    wait_for(lambda: secured.console().post("/api/login", right).status == 200, "back-off ends", 10)

    page.locator("#login input[name=password]").fill("alice-pw")
    page.locator("#login button").click()
    expect(page.locator("#user-name")).to_have_text("User:alice")
    expect(page.locator('#topics tr[data-topic="public"]')).to_have_count(1)
    expect(page.locator('#topics tr[data-topic="secret"]')).to_have_count(0)
    page.goto(f"{secured.url}#/topics/secret")
    expect(page.locator("#error")).to_contain_text("DESCRIBE on TOPIC secret")
    page.goto(f"{secured.url}#/topics/secret/messages")
    expect(page.locator("#error")).to_contain_text("READ on TOPIC secret")
    page.goto(f"{secured.url}#/cluster")
    expect(page.locator("#error")).to_contain_text("DESCRIBE on CLUSTER")

    grant(secured.address, "alice", "secret", AclOperation.READ)
    try:
        page.goto(f"{secured.url}#/topics/secret/messages?from=oldest&partition=0")
        expect(page.locator("#messages tbody tr")).to_have_count(3, timeout=30_000)
        expect(page.locator("#messages")).to_contain_text("the launch code")
        page.goto(f"{secured.url}#/topics/secret")
        # She may read, not write: the page knows it (the topic's authorized
        # operations) and greys out the forms her ACLs refuse, saying why.
        produce = page.locator("#produce-record")
        expect(produce.locator("button")).to_be_disabled()
        expect(produce.locator(".why")).to_have_text(
            "not allowed: User:alice needs WRITE on TOPIC secret"
        )
        expect(page.locator("#delete-records .why")).to_contain_text("DELETE on TOPIC secret")
        expect(page.locator("#alter-config .why")).to_contain_text("ALTER_CONFIGS on TOPIC secret")
        expect(page.locator("#delete-topic button")).to_be_disabled()
    finally:
        revoke(secured.address, "alice", "secret", AclOperation.READ)

    page.locator("#logout").click()
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#login-result")).to_have_text("logged out")
    page.locator("#login input[name=username]").fill("admin")
    page.locator("#login input[name=password]").fill("admin-pw")
    page.locator("#login button").click()
    expect(page.locator("#user-name")).to_have_text("User:admin")
    page.goto(secured.url)
    expect(page.locator('#topics tr[data-topic="secret"]')).to_have_count(1)
    page.goto(f"{secured.url}#/cluster")
    expect(page.locator("#quorum tbody tr")).to_have_count(1)
    page.goto(f"{secured.url}#/topics/secret/messages?from=oldest&partition=0")
    expect(page.locator("#messages tbody tr")).to_have_count(3)


def test_in_chromium_a_page_without_the_session_shows_the_login(
    secured: Secured, browser: Any, page: Any
) -> None:
    browser.clear_cookies()
    page.goto(f"{secured.url}#/topics/secret/messages?from=oldest")
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#view")).not_to_contain_text("launch code")
    expect(page.locator("#user-name")).to_have_text("not logged in")
