"""The ``samsa`` command.

``main(argv)`` returns an exit code instead of exiting, so it is testable;
errors the user can fix (bad flags, bad config) print one readable line and exit
with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from samsa.errors import SamsaError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="samsa",
        description="Samsa: a Kafka-compatible broker in Python, and Kafka's tools for it",
        epilog="examples:\n  samsa broker\n  samsa topics create orders --partitions 3\n"
        "  samsa consume orders --from-beginning --max-messages 10\n"
        "every command: samsa COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from samsa.cli import (
        acls_command,
        bench_command,
        broker_command,
        cluster_command,
        consume_command,
        groups_command,
        produce_command,
        share_groups_command,
        topics_command,
        transactions_command,
        users_command,
    )

    broker_command.add_parser(sub)
    topics_command.add_parser(sub)
    produce_command.add_parser(sub)
    consume_command.add_parser(sub)
    groups_command.add_parser(sub)
    share_groups_command.add_parser(sub)
    transactions_command.add_parser(sub)
    cluster_command.add_parser(sub)
    bench_command.add_parser(sub)
    users_command.add_parser(sub)
    acls_command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
