"""``samsa`` commands against secured listeners with ``--command-config FILE``.

The file holds Kafka's client properties, as Kafka's tools take them; without
it a SASL listener refuses the command with a one-line error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.security.secured_broker import SecuredBroker, running_secured_broker

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    with running_secured_broker(tmp_path_factory.mktemp("cli")) as broker:
        yield broker


def samsa(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samsa.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
        env=dict(os.environ),
    )


def _properties(secured: SecuredBroker, directory: Path) -> Path:
    path = directory / "client.properties"
    path.write_text(
        "# Kafka client properties\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="alice-secret";\n'
        f"ssl.truststore.location={secured.ca_file}\n"
    )
    return path


def test_topics_produce_consume_over_sasl_ssl(secured: SecuredBroker, tmp_path: Path) -> None:
    props = str(_properties(secured, tmp_path))
    connect = ["--bootstrap-server", secured.address("SASL_SSL"), "--command-config", props]
    created = samsa("topics", "create", "cli-secured", "--partitions", "2", *connect)
    assert created.returncode == 0, created.stderr
    listed = samsa("topics", "list", *connect)
    assert "cli-secured" in listed.stdout, listed.stderr
    produced = samsa("produce", "cli-secured", *connect, stdin="a\nb\nc\n")
    assert produced.returncode == 0, produced.stderr
    consumed = samsa("consume", "cli-secured", "--from-beginning", "--max-messages", "3", *connect)
    assert consumed.returncode == 0, consumed.stderr
    assert sorted(consumed.stdout.split()) == ["a", "b", "c"]


def test_mistakes_are_one_line(secured: SecuredBroker, tmp_path: Path) -> None:
    sasl = ["--bootstrap-server", secured.address("SASL_SSL"), "--timeout", "5"]
    missing = samsa("topics", "list", *sasl, "--command-config", str(tmp_path / "none"))
    assert missing.returncode == 2
    assert missing.stderr.strip().startswith("samsa topics: cannot read --command-config")
    wrong = tmp_path / "wrong.properties"
    wrong.write_text(_properties(secured, tmp_path).read_text().replace("alice-secret", "nope"))
    refused = samsa("topics", "list", *sasl, "--command-config", str(wrong))
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert "authentication failed" in refused.stderr.lower(), refused.stderr


def test_users_scram_set_list_delete(secured: SecuredBroker, tmp_path: Path) -> None:
    props = _properties(secured, tmp_path)
    connect = ["--bootstrap-server", secured.address("SASL_SSL"), "--command-config", str(props)]
    created = samsa(
        "users", "scram", "set", "dora", "--mechanism", "SCRAM-SHA-256",
        "--password", "dora-secret", "--iterations", "8192", *connect,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "Set the SCRAM-SHA-256 credential of user dora." in created.stdout
    listed = samsa("users", "scram", "list", "dora", "--output", "json", *connect)
    assert json.loads(listed.stdout) == {"dora": {"SCRAM-SHA-256": 8192}}, listed.stderr

    # dora herself gets in with the credential just stored.
    as_dora = tmp_path / "dora.properties"
    as_dora.write_text(
        props.read_text()
        .replace("SCRAM-SHA-512", "SCRAM-SHA-256")
        .replace(
            'username="alice" password="alice-secret"', 'username="dora" password="dora-secret"'
        )
    )
    dora = ["--bootstrap-server", secured.address("SASL_SSL"), "--command-config", str(as_dora)]
    assert samsa("topics", "list", *dora).returncode == 0

    deleted = samsa("users", "scram", "delete", "dora", "--mechanism", "SCRAM-SHA-256", *connect)
    assert deleted.returncode == 0, deleted.stderr
    gone = samsa("users", "scram", "list", "dora", *connect)
    assert gone.returncode == 2 and "does not exist" in gone.stderr
    assert len(gone.stderr.strip().splitlines()) == 1
    again = samsa("users", "scram", "delete", "dora", "--mechanism", "SCRAM-SHA-256", *connect)
    assert again.returncode == 2 and "RESOURCE_NOT_FOUND" in again.stderr, again.stderr


@pytest.mark.parametrize(
    ("listener", "wants"), [("SASL_PLAINTEXT", "wants SASL"), ("SSL", "wants TLS")]
)
def test_a_plain_client_on_a_secured_listener_is_told_why(
    secured: SecuredBroker, listener: str, wants: str
) -> None:
    """Issue 38, item 7: the broker closes an unauthenticated (or non-TLS)
    connection; the command says so, with the whole timeout (not "1 ms")."""
    result = samsa(
        "topics", "list", "--bootstrap-server", secured.address(listener), "--timeout", "3"
    )
    assert result.returncode == 2
    err = result.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"samsa topics: cannot reach {secured.address(listener)}: "), err
    assert "within 3000 ms" in err and f"the listener probably {wants}" in err, err
    assert err.endswith("pass --command-config FILE"), err
