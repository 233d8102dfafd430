"""The ``samsa`` command.

``main(argv)`` returns an exit code instead of exiting, so it is testable;
errors the user can fix (bad flags, bad config) print one readable line and exit
with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from samsa.errors import SamsaError

COMMANDS = (
    "broker",
    "topics",
    "produce",
    "consume",
    "groups",
    "share_groups",
    "transactions",
    "cluster",
    "bench",
    "users",
    "acls",
    "schemas",
    "tokens",
)
"""Every command, in the order ``samsa --help`` lists them (module ``samsa.cli.commands.<name>``)."""


def build_parser(commands: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="samsa",
        description="Samsa: a Kafka-compatible broker in Python, and Kafka's tools for it",
        epilog="examples:\n  samsa broker\n  samsa topics create orders --partitions 3\n"
        "  samsa consume orders --from-beginning --max-messages 10 --exit-at-end\n"
        "every command: samsa COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in commands:
        importlib.import_module(f"samsa.cli.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # ``samsa broker`` builds its own parser only: the other commands import the
    # client library and numpy, which the broker never uses and which took
    # about a second of every broker's start on a loaded machine.
    parser = build_parser(("broker",) if argv[:1] == ["broker"] else COMMANDS)
    args = parser.parse_args(argv)
    try:
        result: int = args.run(args)
        return result
    except SamsaError as exc:
        print(f"samsa: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
