"""``samsa users scram set|list|delete``: SCRAM users in the metadata log.

The same requests ``kafka-configs --entity-type users --add-config
'SCRAM-SHA-512=[password=...]'`` sends: the password is salted here and only
the salted password leaves the machine.  A user may hold one credential per
mechanism; setting one again replaces it.
"""

from __future__ import annotations

import argparse
import getpass
import os
from typing import Any

from samsa.cli.action_table import Action, add_actions
from samsa.cli.common import (
    CliError,
    console,
    open_admin,
    print_json,
    print_table,
)
from samsa.protocol.sasl.scram import MAX_ITERATIONS, MECHANISMS

PASSWORD_ENV = "SAMSA_SCRAM_PASSWORD"


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "users",
        help="SCRAM users: set, list and delete credentials",
        epilog="example:\n  samsa users scram set alice --mechanism SCRAM-SHA-512",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = p.add_subparsers(dest="users_kind", required=True, metavar="KIND")
    scram = kinds.add_parser("scram", help="SCRAM-SHA-256/512 credentials")
    add_actions(
        scram,
        "scram_action",
        "users",
        (
            Action(
                "set",
                f"add or replace a user's credential (password from --password, ${PASSWORD_ENV} "
                "or a prompt)",
                "samsa users scram set alice --mechanism SCRAM-SHA-512 --iterations 8192",
                run_set,
                _set_arguments,
            ),
            Action(
                "list",
                "users and their mechanisms",
                "samsa users scram list alice bob",
                run_list,
                lambda a: a.add_argument(
                    "users", nargs="*", metavar="USER", help="default: every user"
                ),
                output=True,
            ),
            Action(
                "delete",
                "remove a user's credential for one mechanism",
                "samsa users scram delete alice --mechanism SCRAM-SHA-256",
                run_delete,
                _delete_arguments,
            ),
        ),
    )


_MECHANISMS = sorted(MECHANISMS)


def _set_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("user", metavar="USER")
    a.add_argument("--mechanism", choices=_MECHANISMS, default="SCRAM-SHA-512", type=str.upper)
    a.add_argument("--password", help="visible to other local users in ps; prefer the prompt")
    a.add_argument("--iterations", type=int, default=4096, metavar="N")


def _delete_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("user", metavar="USER")
    a.add_argument("--mechanism", choices=_MECHANISMS, required=True, type=str.upper)


def _password(args: argparse.Namespace) -> str:
    password = args.password or os.environ.get(PASSWORD_ENV)
    if not password:
        password = getpass.getpass(f"password for {args.user}: ")
    if not password:
        raise CliError("the password must not be empty")
    return str(password)


def run_set(args: argparse.Namespace) -> int:
    if not MECHANISMS[args.mechanism][1] <= args.iterations <= MAX_ITERATIONS:
        raise CliError(
            f"--iterations must be between {MECHANISMS[args.mechanism][1]} and {MAX_ITERATIONS}"
        )
    upsertion = {(args.user, args.mechanism): (_password(args), args.iterations)}
    with open_admin(args) as admin:
        errors = admin.alter_user_scram_credentials(upsertion, timeout=args.timeout)
    _raise_first(errors)
    print(f"Set the {args.mechanism} credential of user {args.user}.")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        errors = admin.alter_user_scram_credentials(
            deletions=[(args.user, args.mechanism)], timeout=args.timeout
        )
    _raise_first(errors)
    print(f"Deleted the {args.mechanism} credential of user {args.user}.")
    return 0


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        users = admin.describe_user_scram_credentials(args.users or None, timeout=args.timeout)
    if args.output == "json":
        print_json(users)
        return 0
    rows = [
        (user, mechanism, iterations)
        for user, mechanisms in sorted(users.items())
        for mechanism, iterations in sorted(mechanisms.items())
    ]
    print_table(console(), ("USER", "MECHANISM", "ITERATIONS"), rows)
    return 0


def _raise_first(errors: dict[str, Any]) -> None:
    for error in errors.values():
        if error is not None:
            raise error
