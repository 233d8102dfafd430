"""``samsa tokens create|renew|expire|describe``: kafka-delegation-tokens.sh (KIP-48).

A delegation token is asked for over a SASL (or mutually authenticated TLS)
connection, so every action takes ``--command-config FILE`` with the client
properties to log in by.  ``create`` prints the token's id and HMAC: a client
logs in by SCRAM with the id as user name, the HMAC as password and
``tokenauth="true"`` in its JAAS line.  ``renew`` and ``expire`` name the token
by its HMAC (base64, as printed), as Kafka's tool does.
"""

from __future__ import annotations

import argparse
import base64
import binascii
from datetime import UTC, datetime
from typing import Any

from samsa.cli.action_table import Action, add_command
from samsa.cli.common import CliError, console, open_admin, print_json, print_table
from samsa.client.admin import DelegationToken


def add_parser(sub: Any) -> None:
    add_command(
        sub,
        "tokens",
        "delegation tokens: create, renew, expire and describe (SCRAM login by token)",
        "example:\n  samsa tokens create --renewer User:bob --command-config alice.properties\n"
        "the broker needs delegation.token.secret.key; a token logs in with\n"
        '  ScramLoginModule required username="<TOKENID>" password="<HMAC>" tokenauth="true";',
        (
            Action(
                "create",
                "a token of the caller (or of --owner), renewable by --renewer",
                "samsa tokens create --renewer User:bob --max-lifetime-ms 86400000",
                run_create,
                _create_arguments,
                output=True,
            ),
            Action(
                "renew",
                "push a token's expiry out (by the broker's period, or --renew-time-ms)",
                "samsa tokens renew --hmac BASE64 --renew-time-ms 3600000",
                run_renew,
                lambda a: _period_arguments(a, "--renew-time-ms", "renewal period"),
                output=True,
            ),
            Action(
                "expire",
                "end a token now (default) or after --expiry-time-ms",
                "samsa tokens expire --hmac BASE64",
                run_expire,
                lambda a: _period_arguments(a, "--expiry-time-ms", "time left (negative: now)"),
                output=True,
            ),
            Action(
                "describe",
                "the tokens the caller may see (of --owner only, if given)",
                "samsa tokens describe --owner User:alice",
                run_describe,
                lambda a: a.add_argument(
                    "--owner",
                    action="append",
                    metavar="TYPE:NAME",
                    help="tokens owned (or renewable) by this principal; repeatable",
                ),
                output=True,
            ),
        ),
    )


def _create_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument(
        "--renewer",
        action="append",
        default=[],
        metavar="User:NAME",
        help="a principal that may renew the token; repeatable",
    )
    a.add_argument(
        "--owner",
        metavar="User:NAME",
        help="create the token for this principal (needs CreateTokens on it)",
    )
    a.add_argument(
        "--max-lifetime-ms",
        type=int,
        default=-1,
        metavar="MS",
        help="the token's longest life (default: delegation.token.max.lifetime.ms)",
    )


def _period_arguments(a: argparse.ArgumentParser, flag: str, what: str) -> None:
    a.add_argument("--hmac", required=True, metavar="BASE64", help="the token's HMAC, as printed")
    a.add_argument(flag, type=int, default=-1, metavar="MS", help=f"the {what}")


def _hmac(args: argparse.Namespace) -> bytes:
    try:
        return base64.b64decode(args.hmac, validate=True)
    except (binascii.Error, ValueError):
        raise CliError(f"--hmac {args.hmac!r} is not base64 (copy it as printed)") from None


def _principal(text: str, flag: str) -> str:
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise CliError(f"{flag} {text!r}: expected TYPE:NAME, such as User:alice")
    return text


def run_create(args: argparse.Namespace) -> int:
    renewers = [_principal(r, "--renewer") for r in args.renewer]
    owner = _principal(args.owner, "--owner") if args.owner else None
    with open_admin(args) as admin:
        token = admin.create_delegation_token(
            renewers, owner, args.max_lifetime_ms, timeout=args.timeout
        )
    _print_tokens(args, [token])
    return 0


def run_renew(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        expiry = admin.renew_delegation_token(_hmac(args), args.renew_time_ms, timeout=args.timeout)
    _print_expiry(args, "renewed", expiry)
    return 0


def run_expire(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        expiry = admin.expire_delegation_token(
            _hmac(args), args.expiry_time_ms, timeout=args.timeout
        )
    _print_expiry(args, "expired" if args.expiry_time_ms < 0 else "set to expire", expiry)
    return 0


def run_describe(args: argparse.Namespace) -> int:
    owners = [_principal(o, "--owner") for o in args.owner] if args.owner else None
    with open_admin(args) as admin:
        tokens = admin.describe_delegation_tokens(owners, timeout=args.timeout)
    _print_tokens(args, tokens)
    return 0


def _print_expiry(args: argparse.Namespace, what: str, expiry_ms: int) -> None:
    if args.output == "json":
        print_json({"expiry_timestamp_ms": expiry_ms})
    else:
        print(f"The token was {what}; its expiry is {_date(expiry_ms)}.")


def _print_tokens(args: argparse.Namespace, tokens: list[DelegationToken]) -> None:
    if args.output == "json":
        print_json([_as_json(t) for t in tokens])
        return
    rows = [
        (
            t.token_id,
            t.password,
            t.owner,
            t.requester,
            ",".join(t.renewers),
            _date(t.issue_timestamp_ms),
            _date(t.expiry_timestamp_ms),
            _date(t.max_timestamp_ms),
        )
        for t in tokens
    ]
    headers = ("TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS", "ISSUED", "EXPIRES", "MAX")
    print_table(console(), headers, rows)


def _as_json(token: DelegationToken) -> dict[str, Any]:
    return {
        "token_id": token.token_id,
        "hmac": token.password,
        "owner": token.owner,
        "requester": token.requester,
        "renewers": list(token.renewers),
        "issue_timestamp_ms": token.issue_timestamp_ms,
        "expiry_timestamp_ms": token.expiry_timestamp_ms,
        "max_timestamp_ms": token.max_timestamp_ms,
    }


def _date(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except (OverflowError, OSError, ValueError):
        return str(ms)
