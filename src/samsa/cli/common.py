"""What every client-side ``samsa`` subcommand shares: connection flags, output, errors.

The tools follow Kafka's: ``--bootstrap-server`` names a broker (``--bootstrap``
is kept as an alias; ``SAMSA_BOOTSTRAP`` or ``127.0.0.1:9092`` otherwise).
Tables and progress bars come from ``rich``, which prints colours only on a
terminal, so piped output stays plain; ``--output json`` gives scripts one
JSON document instead.  A mistake the user can fix (broker unreachable,
unknown topic, malformed ``k=v``) prints one line ``samsa <command>: <why>``
and exits 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from samsa.client.admin import Admin
from samsa.client.errors import KafkaTimeoutError, ListenerSecurityError
from samsa.config.values import parse_properties
from samsa.errors import ConfigError, ErrorCode, KafkaError, SamsaError
from samsa.protocol.config_sources import CONFIG_SOURCES as CONFIG_SOURCES

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
BOOTSTRAP_ENV = "SAMSA_BOOTSTRAP"


UNREACHABLE = (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NETWORK_EXCEPTION)
"""Errors that mean the broker could not be talked to at all."""


class CliError(SamsaError):
    """A failure explained in one line to the user (exit status 2)."""


def default_bootstrap() -> str:
    return os.environ.get(BOOTSTRAP_ENV) or DEFAULT_BOOTSTRAP


def add_connection_args(p: argparse.ArgumentParser, *, timeout: float = 10.0) -> None:
    p.add_argument(
        "--bootstrap-server",
        "--bootstrap",
        dest="bootstrap",
        metavar="HOST:PORT",
        default=default_bootstrap(),
        help=f"a broker to talk to (default ${BOOTSTRAP_ENV} or {DEFAULT_BOOTSTRAP})",
    )
    p.add_argument(
        "--command-config",
        metavar="FILE",
        help="client properties (security.protocol, sasl.*, ssl.*), as Kafka's tools take",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=timeout,
        metavar="SECONDS",
        help=f"give up on the broker after this long (default {timeout:g})",
    )


def add_output_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--output",
        choices=("table", "json"),
        default="table",
        help="table for people (default) or json for scripts",
    )


def add_subcommand(sub: Any, name: str, help_text: str, example: str) -> argparse.ArgumentParser:
    """A subparser whose ``--help`` ends with an example, as Kafka's tools' do."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description=help_text[:1].upper() + help_text[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def parse_kv(items: Sequence[str], what: str) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; a malformed item is a CliError."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"malformed {what} {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


@contextlib.contextmanager
def quiet_client_logs() -> Iterator[None]:
    """The client logs each failed connection attempt; a one-shot command's
    single error line says it better."""
    client_log = logging.getLogger("samsa.client")
    previous = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        client_log.setLevel(previous)


def client_config(args: argparse.Namespace, settings: dict[str, Any]) -> dict[str, Any]:
    """The client's settings: ``--command-config``'s properties (how to reach a
    secured listener), under the command's own (``--bootstrap-server``, timeouts)."""
    path = getattr(args, "command_config", None)
    config: dict[str, Any] = {}
    if path:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise CliError(f"cannot read --command-config {path}: {exc.strerror}") from None
        try:
            config.update(parse_properties(text))
        except ConfigError as exc:
            raise CliError(f"--command-config {path}: {exc}") from None
    config.update(settings)
    config["bootstrap.servers"] = args.bootstrap
    return config


def open_admin(args: argparse.Namespace) -> Admin:
    ms = max(int(args.timeout * 1000), 1)
    config = client_config(args, {"request.timeout.ms": ms, "client.id": "samsa-cli"})
    try:
        return Admin(config)
    except SamsaError as exc:
        raise CliError(f"bad client settings for {args.bootstrap!r}: {exc}") from None


def describe_error(exc: BaseException, bootstrap: str) -> str:
    """One line that says what went wrong in the user's terms."""
    if isinstance(exc, CliError):
        return str(exc)
    if isinstance(exc, KafkaError) and exc.code not in UNREACHABLE:
        return str(exc)  # names the Kafka error and what it was about
    if isinstance(exc, ListenerSecurityError):
        return (
            f"cannot reach {bootstrap}: {exc}: put those client settings in a file "
            "and pass --command-config FILE"
        )
    if isinstance(exc, (KafkaError, KafkaTimeoutError, OSError)):
        return f"cannot reach {bootstrap}: {exc}"
    return str(exc)


def partition_count(args: argparse.Namespace, topic: str) -> int:
    """How many partitions ``topic`` has; an unknown topic is a CliError."""
    with open_admin(args) as admin:
        try:
            return len(admin.describe_topics([topic], timeout=args.timeout)[topic].partitions)
        except KafkaError as exc:
            if exc.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                raise CliError(f"unknown topic {topic!r}") from None
            raise


def guarded(command: str, work: Callable[[argparse.Namespace], int]) -> Callable[..., int]:
    """Wrap a subcommand so user errors are one line on stderr and exit 2."""

    def run(args: argparse.Namespace) -> int:
        with quiet_client_logs():
            try:
                return work(args)
            except BrokenPipeError:
                return 0  # `samsa consume ... | head`: the reader is done
            except (SamsaError, OSError) as exc:
                print(f"samsa {command}: {describe_error(exc, args.bootstrap)}", file=sys.stderr)
                return 2

    return run


def console(out: TextIO | None = None) -> Console:
    """A rich console on ``out`` (stdout by default): colours only on a terminal,
    and no wrapping when piped, so every table row stays one line for scripts."""
    stream = out or sys.stdout
    width = None if stream.isatty() else 10_000
    return Console(file=stream, highlight=False, soft_wrap=True, width=width)


def print_table(
    con: Console, headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> None:
    table = Table(title=title, box=None, pad_edge=False, header_style="bold", title_justify="left")
    for header in headers:
        table.add_column(header)
    for row in rows:
        table.add_row(*("-" if cell is None else str(cell) for cell in row))
    con.print(table)


def print_json(value: Any, out: TextIO | None = None) -> None:
    (out or sys.stdout).write(json.dumps(value, indent=2, sort_keys=True) + "\n")
