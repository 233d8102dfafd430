"""Fixtures for the web console in headless Chromium (Debian's), driven by Playwright.

Each test saves a full-page screenshot under ``test-artifacts/`` at the
repository root (``console-<test name>.png``), so a person can look at what the
page showed.  Waits are on what the page displays (Playwright's auto-waiting
expectations), never sleeps.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest

from samsa.cli.main import main
from samsa.testing import BrokerProcess

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CONSOLE_ARGS = ["--console-listen", "127.0.0.1:0"]


def console_address(proc: BrokerProcess) -> str:
    """The console's base URL, from the broker's log line."""
    assert proc.wait_for_log("console listening on http://")
    found = re.search(r"console listening on (http://\S+/)", proc.log_text())
    assert found is not None
    return found.group(1)


@contextlib.contextmanager
def console_broker(data: Path, settings: dict[str, str] | None = None) -> Iterator[BrokerProcess]:
    """A running broker with its console on, stopped (and killed) afterwards."""
    with BrokerProcess(data, settings=settings, args=CONSOLE_ARGS) as proc:
        yield proc


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with console_broker(tmp_path_factory.mktemp("console") / "data") as proc:
        yield proc


@pytest.fixture(scope="module")
def console_url(broker: BrokerProcess) -> str:
    return console_address(broker)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    page = browser.new_page()
    try:
        yield page
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"console-{request.node.name}.png"), full_page=True)
        page.close()


def snap(page: Any, name: str) -> None:
    """A screenshot in the middle of a test (the fixture takes the last one)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"), full_page=True)


def api(base: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """(status, JSON) of one call to the console's API; a POST when ``body`` is given."""
    data = None if body is None else json.dumps(body).encode()
    headers = {} if body is None else {"Content-Type": "application/json"}
    request = urllib.request.Request(base + path.lstrip("/"), data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """What ``samsa ARGV --output json`` prints, run in this process."""
    capsys.readouterr()
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)
