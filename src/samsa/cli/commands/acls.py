"""``samsa acls create|list|delete``: kafka-acls.sh, through the Kafka API.

ACLs are only worth changing on a secured broker, so every subcommand takes
``--command-config FILE`` (Kafka's client properties: ``security.protocol``,
``sasl.mechanism``, ``sasl.jaas.config``, ``ssl.*``) to log in as a principal
allowed to change them (a super user).  Names are Kafka's (``--operation
Read``, ``--topic``, ``--resource-pattern-type prefixed``).
"""

from __future__ import annotations

import argparse
from typing import Any

from samsa.cli.action_table import Action, add_command
from samsa.cli.common import (
    CliError,
    console,
    open_admin,
    print_json,
    print_table,
)
from samsa.protocol.acl import (
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    AclOperation,
    PatternType,
    Permission,
    ResourceType,
)

_RESOURCES = (
    ("topic", ResourceType.TOPIC),
    ("group", ResourceType.GROUP),
    ("transactional_id", ResourceType.TRANSACTIONAL_ID),
)


def add_parser(sub: Any) -> None:
    add_command(
        sub,
        "acls",
        "create, list and delete ACLs (the broker needs an authorizer)",
        "example:\n  samsa acls create --principal User:alice --operation Write "
        "--topic orders --command-config admin.properties",
        # Every action's connection flags take --command-config: the client
        # properties to log in with (as a super user, typically).
        (
            Action(
                "create",
                "allow (or deny) a principal operations on a resource",
                "samsa acls create --principal User:alice --operation Read --operation Describe "
                "--topic orders",
                run_create,
                _create_arguments,
            ),
            Action(
                "list",
                "the ACLs matching the options (all by default)",
                "samsa acls list --topic orders",
                run_list,
                _filter_arguments,
                output=True,
            ),
            Action(
                "delete",
                "delete the ACLs matching the options",
                "samsa acls delete --topic orders",
                run_delete,
                _filter_arguments,
            ),
        ),
    )


def _create_arguments(a: argparse.ArgumentParser) -> None:
    _resource_args(a)
    a.add_argument("--principal", required=True, metavar="TYPE:NAME", help="e.g. User:alice")
    a.add_argument(
        "--operation", action="append", required=True, metavar="OP",
        help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, "
        "AlterConfigs, IdempotentWrite, All (repeatable)",
    )  # fmt: skip
    a.add_argument("--host", default="*", help="the client address it applies to (default *)")
    a.add_argument("--deny", action="store_true", help="a DENY entry (default ALLOW)")


def _filter_arguments(a: argparse.ArgumentParser) -> None:
    _resource_args(a)
    a.add_argument("--principal", metavar="TYPE:NAME", help="only this principal's")


def _resource_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--topic", metavar="NAME", help="a topic (* for every topic)")
    a.add_argument("--group", metavar="NAME", help="a consumer group (* for every group)")
    a.add_argument("--transactional-id", metavar="ID", help="a transactional id")
    a.add_argument("--cluster", action="store_true", help="the cluster itself")
    a.add_argument(
        "--resource-pattern-type", choices=("literal", "prefixed"), default="literal",
        help="prefixed: every resource whose name starts with NAME (default literal)",
    )  # fmt: skip


def _resource(args: argparse.Namespace, required: bool) -> tuple[ResourceType, str | None]:
    chosen = [(rtype, getattr(args, attr)) for attr, rtype in _RESOURCES if getattr(args, attr)]
    if args.cluster:
        chosen.append((ResourceType.CLUSTER, CLUSTER_NAME))
    if len(chosen) > 1:
        raise CliError("name one resource: --topic, --group, --transactional-id or --cluster")
    if not chosen:
        if required:
            raise CliError("name a resource: --topic, --group, --transactional-id or --cluster")
        return ResourceType.ANY, None
    return chosen[0]


def _operation(text: str) -> AclOperation:
    key = text.replace("-", "").replace("_", "").upper()
    for op in AclOperation:
        if op.name.replace("_", "") == key and op not in (AclOperation.ANY, AclOperation.UNKNOWN):
            return op
    raise CliError(f"unknown operation {text!r} (e.g. Read, Write, Describe, All)")


def _pattern(args: argparse.Namespace) -> PatternType:
    return PatternType.PREFIXED if args.resource_pattern_type == "prefixed" else PatternType.LITERAL


def _principal(text: str | None) -> str | None:
    if text is not None and ":" not in text:
        raise CliError(f"principal {text!r} must be TYPE:NAME, e.g. User:alice")
    return text


def run_create(args: argparse.Namespace) -> int:
    rtype, name = _resource(args, required=True)
    assert name is not None
    principal = _principal(args.principal)
    assert principal is not None
    permission = Permission.DENY if args.deny else Permission.ALLOW
    entries = [
        AclBinding(rtype, name, _pattern(args), principal, args.host, _operation(op), permission)
        for op in args.operation
    ]
    with open_admin(args) as admin:
        admin.create_acls(entries, timeout=args.timeout)
    print(f"Created {len(entries)} ACL(s) on {rtype.name} {name}.")
    return 0


def _filter(args: argparse.Namespace) -> AclFilter:
    rtype, name = _resource(args, required=False)
    pattern = _pattern(args) if name is not None else PatternType.ANY
    return AclFilter(
        rtype, name, pattern, _principal(args.principal), None, AclOperation.ANY, Permission.ANY
    )


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        entries = admin.describe_acls(_filter(args), timeout=args.timeout)
    rows = sorted(_row(e) for e in entries)
    if args.output == "json":
        keys = ("resource_type", "name", "pattern_type", "principal", "host", "operation",
                "permission")  # fmt: skip
        print_json([dict(zip(keys, row, strict=True)) for row in rows])
        return 0
    print_table(
        console(),
        ["RESOURCE", "NAME", "PATTERN", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION"],
        rows,
    )
    return 0


def run_delete(args: argparse.Namespace) -> int:
    acl_filter = _filter(args)
    if acl_filter.name is None and acl_filter.principal is None:
        raise CliError("name a resource or --principal: refusing to delete every ACL")
    with open_admin(args) as admin:
        deleted = admin.delete_acls([acl_filter], timeout=args.timeout)
    for row in sorted(_row(e) for e in deleted):
        print("Deleted " + " ".join(row))
    print(f"Deleted {len(deleted)} ACL(s).")
    return 0


def _row(acl: AclBinding) -> tuple[str, ...]:
    return (
        acl.resource_type.name,
        acl.name,
        acl.pattern_type.name,
        acl.principal,
        acl.host,
        acl.operation.name,
        acl.permission.name,
    )
