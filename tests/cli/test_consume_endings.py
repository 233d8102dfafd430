"""``samsa consume`` ends by itself when told to (issue 38, item 3).

A topic holding fewer records than ``--max-messages`` used to keep the command
waiting until Ctrl-C.  ``--exit-at-end`` (kcat's ``-e``) ends once every
assigned partition is read to its end; ``--idle-timeout`` (kafka-console-
consumer's ``--timeout-ms``) ends after that long without a record.  Each call
is the real ``samsa`` in its own process against one shared real broker.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from tests.cli.test_cli_tools import samsa

from samsa.cli.main import main
from samsa.testing import BrokerProcess


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(tmp_path_factory.mktemp("consume-endings") / "data")
    proc.start()
    try:
        created = samsa(proc, "topics", "create", "two-records", "--partitions", "3")
        assert created.returncode == 0, created.stderr
        produced = samsa(proc, "produce", "two-records", stdin=b"a\nb\n")
        assert produced.returncode == 0, produced.stderr
        yield proc
    finally:
        proc.stop()
        proc.kill()


def test_max_messages_above_the_topic_ends_at_the_end_of_the_partitions(
    broker: BrokerProcess,
) -> None:
    """docs/cli.md's example: 10 asked for, 2 there; it prints both and ends."""
    result = samsa(
        broker, "consume", "two-records", "--from-beginning", "--format", "json",
        "--max-messages", "10", "--exit-at-end", timeout=30,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["value"] for line in result.stdout.splitlines()] == ["a", "b"]


def test_short_flag_and_an_empty_topic(broker: BrokerProcess) -> None:
    assert samsa(broker, "topics", "create", "empty-topic").returncode == 0
    result = samsa(broker, "consume", "empty-topic", "--from-beginning", "-e", timeout=30)
    assert (result.returncode, result.stdout) == (0, ""), result.stderr


def test_a_group_member_ends_at_the_end_and_commits_what_it_printed(
    broker: BrokerProcess,
) -> None:
    first = samsa(
        broker, "consume", "two-records", "--group", "endings", "--from-beginning", "-e",
        timeout=60,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert sorted(first.stdout.split()) == ["a", "b"]
    again = samsa(
        broker, "consume", "two-records", "--group", "endings", "--from-beginning", "-e",
        timeout=60,
    )  # fmt: skip
    assert (again.returncode, again.stdout) == (0, ""), again.stderr


def test_idle_timeout_ends_after_that_long_without_a_record(broker: BrokerProcess) -> None:
    started = time.monotonic()
    result = samsa(
        broker, "consume", "two-records", "--from-beginning", "--idle-timeout", "1", timeout=30
    )
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == ["a", "b"]
    assert took >= 1.0


def test_a_bad_idle_timeout_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["consume", "two-records", "--idle-timeout", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "samsa consume: invalid --idle-timeout 0: must be positive\n"
