"""The security page (issue 38) on a broker with SASL users and ACLs: ACLs
(DescribeAcls, and CreateAcls / DeleteAcls as actions), SCRAM users
(DescribeUserScramCredentials) and client quotas (DescribeClientQuotas), each
as the logged-in user through the broker's authorizer.

Users as in ``secured.py``: admin (super user), alice (READ on ``public``),
carol (SCRAM-SHA-512).  What the page shows is checked against
confluent-kafka's view of the same ACLs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka.admin import (
    AclBindingFilter,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from confluent_kafka.admin import AclOperation as KafkaOperation
from tests.console.conftest import snap
from tests.console.secured import (
    Console,
    console_url,
    kafka_conf,
    prepare_data,
    security_settings,
)
from tests.console.test_console_security import log_in
from tests.security.acl_broker import free_port

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.timeout(240)
expect = playwright_api.expect
ALICE_WRITES = {
    "principal": "User:alice",
    "operation": "WRITE",
    "resource_type": "TOPIC",
    "resource_name": "public",
}


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, str, str]]:
    port = free_port()
    settings = {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port},PLAINTEXT://127.0.0.1:0",
        "inter.broker.listener.name": "PLAINTEXT",
        "console.listen": "127.0.0.1:0",
        **security_settings("SASL_PLAINTEXT"),
    }
    data = tmp_path_factory.mktemp("console-security-views") / "data"
    proc = BrokerProcess(data, settings, port=None)
    proc.start(timeout=90)
    try:
        address = f"127.0.0.1:{port}"
        prepare_data(address)
        yield proc, address, console_url(proc)
    finally:
        proc.stop()
        proc.kill()


def kafka_acls(address: str, principal: str) -> set[tuple[str, str, str]]:
    """(operation, resource type, name) of ``principal``'s ACLs, as confluent-kafka lists them."""
    admin = AdminClient(kafka_conf(address, "admin"))
    every = AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        principal,
        None,
        KafkaOperation.ANY,
        AclPermissionType.ANY,
    )
    found = admin.describe_acls(every).result(30)
    return {(b.operation.name, b.restype.name, b.name) for b in found}


def test_admin_lists_acls_users_and_quotas_and_adds_and_removes_an_acl(
    secured: tuple[BrokerProcess, str, str], browser: Any, page: Any
) -> None:
    proc, address, url = secured
    admin = Console(url).login("admin")
    acls = admin.get("/api/acls").body
    assert acls["enabled"] is True and "ALTER" in acls["authorized_operations"]
    assert {
        "resource_type": "TOPIC",
        "resource_name": "public",
        "pattern_type": "LITERAL",
        "principal": "User:alice",
        "host": "*",
        "operation": "READ",
        "permission": "ALLOW",
    } in acls["acls"]
    users = admin.get("/api/users").body["users"]
    assert users == [
        {"user": "carol", "mechanisms": [{"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}
    ]
    assert admin.get("/api/quotas").body["quotas"] == []

    browser.clear_cookies()
    log_in(page, url, "admin", "admin-pw")
    page.goto(f"{url}#/security")
    expect(page.locator('#acls tr[data-acl="User:alice READ TOPIC public"]')).to_have_count(1)
    expect(page.locator('#scram-users tr[data-user="carol"]')).to_contain_text("SCRAM-SHA-512")
    form = page.locator("#create-acl")
    form.locator("input[name=principal]").fill("User:alice")
    form.locator("select[name=operation]").select_option("WRITE")
    form.locator("input[name=resource_name]").fill("public")
    form.locator("button").click()
    expect(page.locator("#acl-result")).to_contain_text("done")
    added = page.locator('#acls tr[data-acl="User:alice WRITE TOPIC public"]')
    expect(added).to_have_count(1)
    assert ("WRITE", "TOPIC", "public") in kafka_acls(address, "User:alice")
    snap(page, "security-page-admin")
    added.locator("button", has_text="remove").click()
    expect(added).to_have_count(0)
    assert ("WRITE", "TOPIC", "public") not in kafka_acls(address, "User:alice")
    assert ("READ", "TOPIC", "public") in kafka_acls(address, "User:alice")
    for action in ("create-acl", "delete-acl"):
        pattern = rf"console action {action} principal='User:alice' .* by User:admin from .*: done"
        assert any(re.search(pattern, line) for line in proc.log_lines), action
    reply = admin.post("/api/actions/delete-acl", ALICE_WRITES)
    assert reply.status == 404 and "no such ACL" in reply.error
    reply = admin.post("/api/actions/create-acl", {**ALICE_WRITES, "operation": "FLY"})
    assert reply.status == 400 and "operation must be one of" in reply.error


def test_alice_may_not_read_or_change_the_security_views(
    secured: tuple[BrokerProcess, str, str], browser: Any, page: Any
) -> None:
    _, address, url = secured
    alice = Console(url).login("alice")
    for path, needs in (
        ("/api/acls", "DESCRIBE on CLUSTER kafka-cluster"),
        ("/api/users", "DESCRIBE on CLUSTER kafka-cluster"),
        ("/api/quotas", "DESCRIBE_CONFIGS on CLUSTER kafka-cluster"),
    ):
        reply = alice.get(path)
        assert reply.status == 403 and needs in reply.error, (path, reply.body)
    reply = alice.post("/api/actions/create-acl", ALICE_WRITES)
    assert reply.status == 403 and "ALTER on CLUSTER kafka-cluster" in reply.error
    assert ("WRITE", "TOPIC", "public") not in kafka_acls(address, "User:alice")

    browser.clear_cookies()
    log_in(page, url, "alice", "alice-pw")
    page.goto(f"{url}#/security")
    expect(page.locator("#acls-note")).to_contain_text("DESCRIBE on CLUSTER kafka-cluster")
    expect(page.locator("#users-note")).to_contain_text("DESCRIBE on CLUSTER kafka-cluster")
    expect(page.locator("#quotas-note")).to_contain_text("DESCRIBE_CONFIGS on CLUSTER")
    expect(page.locator("#error")).to_be_hidden()  # each card says its own refusal
    expect(page.locator("#create-acl button")).to_be_disabled()
    expect(page.locator("#create-acl .why")).to_have_text(
        "not allowed: User:alice needs ALTER on CLUSTER kafka-cluster"
    )
