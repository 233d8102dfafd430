"""How the console's and /metrics' security settings are checked at start-up, and
TLS on both: a console that would be open to whom the broker refuses does not
start (one line naming the setting), and a keystore makes the endpoints HTTPS."""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tests.console.secured import AUTHORIZER, plain_jaas
from tests.security.certs import CertificateAuthority

from samsa.config.broker_config import BrokerConfig
from samsa.config.node_settings import NodeSettings
from samsa.errors import ConfigError
from samsa.server.endpoints.security_checks import check_http_settings
from samsa.testing import BrokerProcess

pytestmark = pytest.mark.timeout(120)


def run_broker(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "samsa.cli", "broker", "--data-dir", str(data_dir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_an_authorizer_without_a_console_login_stops_the_start_with_one_line(
    tmp_path: Path,
) -> None:
    result = run_broker(
        tmp_path / "data",
        "--listen",
        "127.0.0.1:0",
        "--console-listen",
        "127.0.0.1:0",
        "--set",
        f"authorizer.class.name={AUTHORIZER}",
        "--set",
        "super.users=User:admin",
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("samsa: error: console.login.listener is required: ")
    assert "authorizer" in last
    assert not (tmp_path / "data").exists()  # refused before anything was made


def check(**settings: str) -> None:
    config = BrokerConfig(settings)
    check_http_settings(
        config, NodeSettings.from_config(config), bool(config["authorizer.class.name"])
    )


SASL_ONLY = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:9092",
    "sasl.enabled.mechanisms": "PLAIN",
    "sasl.jaas.config": plain_jaas(),
}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {**SASL_ONLY, "console.listen": "127.0.0.1:0"},
            "console.login.listener is required: every client listener of this broker takes "
            "SASL logins only",
        ),
        (
            {"authorizer.class.name": AUTHORIZER, "console.listen": "127.0.0.1:0"},
            "add a SASL listener for its users and name it in console.login.listener",
        ),
        (
            {"console.listen": "0.0.0.0:8080"},
            "console.listen=0.0.0.0:8080 would serve a console without login beyond this "
            "machine: bind it to 127.0.0.1, set console.login.listener, or set "
            "console.allow.remote.anonymous=true",
        ),
        (
            {"console.listen": "127.0.0.1:0", "console.login.listener": "PLAINTEXT"},
            "console.login.listener=PLAINTEXT: not a SASL listener of this broker (it has none)",
        ),
        (
            {**SASL_ONLY, "metrics.listen": "127.0.0.1:0", "metrics.login.listener": "nope"},
            "metrics.login.listener=nope: not a SASL listener of this broker (SASL_PLAINTEXT)",
        ),
        (
            {"console.listen": "127.0.0.1:0", "console.ssl.keystore.location": "/no/such.pem"},
            "console.ssl.keystore: cannot load the key and certificate",
        ),
    ],
)
def test_settings_that_would_open_the_console_are_refused(
    settings: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        check(**settings)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_what_may_stay_open_does() -> None:
    check(**{"console.listen": "127.0.0.1:8080"})  # the single-node default
    check(**{"console.listen": "localhost:8080", "metrics.listen": "0.0.0.0:9100"})
    check(**{"console.listen": "0.0.0.0:8080", "console.allow.remote.anonymous": "true"})
    check(
        **{**SASL_ONLY, "console.listen": "0.0.0.0:0", "console.login.listener": "sasl_plaintext"}
    )


def test_a_keystore_makes_the_console_and_metrics_https(tmp_path: Path) -> None:
    """With login on (SASL users, no authorizer): the cookie is Secure."""
    ca = CertificateAuthority()
    certs = tmp_path / "certs"
    certs.mkdir()
    ca_file, _, _ = ca.pem.write(certs, "ca")
    _, _, keystore = ca.issue("console").write(certs, "console")
    issued = ca.issue("metrics")
    settings = {
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.jaas.config": plain_jaas(),
        "console.listen": "127.0.0.1:0",
        "console.login.listener": "SASL_PLAINTEXT",
        "console.ssl.keystore.location": str(keystore),
        "metrics.listen": "127.0.0.1:0",
        "metrics.ssl.keystore.certificate.chain": issued.cert,
        "metrics.ssl.keystore.key": issued.key,
    }
    proc = BrokerProcess(tmp_path / "data", settings, port=None)
    proc.start(timeout=60)
    try:
        urls = {}
        for name in ("console", "metrics"):
            assert proc.wait_for_log(f"{name} listening on https://", 30)
            found = re.search(rf"{name} listening on (https://\S+/)", proc.log_text())
            assert found is not None
            urls[name] = found.group(1).replace("https://127.0.0.1", "https://localhost")
        trusted = ssl.create_default_context(cafile=str(ca_file))

        def call(url: str, body: dict[str, Any] | None = None) -> tuple[int, Any, Any]:
            data = None if body is None else json.dumps(body).encode()
            request = urllib.request.Request(url, data=data)
            if data is not None:
                request.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(request, timeout=30, context=trusted) as response:
                    return response.status, response.headers, response.read()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.headers, exc.read()

        status, _, _ = call(urls["console"] + "api/topics")
        assert status == 401
        status, headers, body = call(
            urls["console"] + "api/login", {"username": "alice", "password": "alice-pw"}
        )
        assert status == 200, body
        assert "Secure" in headers["Set-Cookie"].split("; ")
        status, _, body = call(urls["metrics"] + "metrics")
        assert status == 200 and b"samsa_" in body
        plain = urls["console"].replace("https://", "http://")
        with pytest.raises((urllib.error.URLError, ConnectionError, http_client_errors())):
            urllib.request.urlopen(plain + "api/login", timeout=10)
    finally:
        proc.stop()
        proc.kill()


def http_client_errors() -> type[Exception]:
    import http.client

    return http.client.HTTPException
