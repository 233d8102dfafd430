"""The doc-block runner fails when a documented command fails (or never ends).

Without these, a runner that swallowed errors would pass every page: each case
is a block that must fail, and one that must pass, run as the pages' are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.docs.doc_blocks import Block, Marker, parse_marker
from tests.docs.page_runner import doc_env
from tests.docs.shell_session import Background, DocBlockFailed, ShellSession


def block(text: str, language: str = "sh", marker: str = "run") -> Block:
    return Block(Path(__file__), 1, language, text, parse_marker(marker))


@pytest.fixture
def session(tmp_path: Path) -> ShellSession:
    shell = ShellSession(tmp_path, doc_env())
    yield shell
    shell.close()


def test_state_carries_over_and_output_is_returned(session: ShellSession) -> None:
    session.run(block("export GREETING=hello\ncd /\n"))
    assert session.run(block('printf "%s from %s" "$GREETING" "$PWD"\n')) == "hello from /"


@pytest.mark.parametrize(
    "text",
    ["false\n", "true\nls /no/such/dir\necho after\n", "samsa topics --no-such-flag\n"],
    ids=["false", "a failure in the middle", "a bad samsa flag"],
)
def test_any_failing_command_fails_the_block(session: ShellSession, text: str) -> None:
    with pytest.raises(DocBlockFailed, match="a command failed"):
        session.run(block(text))
    assert session.run(block("echo still usable\n")) == "still usable\n"


def test_python_blocks_run_and_fail_like_commands(session: ShellSession) -> None:
    assert session.run(block("print(6 * 7)\n", "python")) == "42\n"
    with pytest.raises(DocBlockFailed, match="ZeroDivisionError"):
        session.run(block("1 / 0\n", "python"))


def test_a_block_that_does_not_end_fails_in_time(session: ShellSession) -> None:
    with pytest.raises(DocBlockFailed, match="not done within 1 s"):
        session.run(block("sleep 30\n"), timeout=1)


def test_background_waits_for_its_line_and_fails_if_it_ends_first(tmp_path: Path) -> None:
    up = Background(block("echo starting; echo ready; exec sleep 60\n"), tmp_path, doc_env())
    up.wait_for("ready")
    assert "ready" in up.stop()
    gone = Background(block("echo nope; exit 3\n"), tmp_path, doc_env())
    with pytest.raises(DocBlockFailed, match="ended \\(status 3\\) before 'ready'"):
        gone.wait_for("ready")


def test_markers_say_what_docs_readme_lists() -> None:
    assert parse_marker('background "listening on" 3') == Marker("background", "listening on", 3)
    assert parse_marker('skip "needs Spark"').reason == "needs Spark"
    for bad in ("skip", "sometimes", "background", "broker now"):
        with pytest.raises(ValueError):
            parse_marker(bad)
