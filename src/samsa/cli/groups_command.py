"""``samsa groups list`` / ``samsa groups describe GROUP``: look at consumer groups.

Operators need the same view ``kafka-consumer-groups.sh`` gives them: which
groups exist and in which state, who is a member and what it owns, and how far
behind each partition is.  Everything goes through the Samsa ``Admin`` client
over the wire (never the broker's internals), so the command works the same
against Samsa and against Apache Kafka.

Errors a user can act on (broker unreachable, unknown group) print one line
and exit 2; no traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from samsa.client.admin import LATEST, Admin, GroupDescription
from samsa.client.metadata import TopicPartition
from samsa.errors import SamsaError

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"


class GroupsCommandError(SamsaError):
    """A failure explained in one line to the user (exit status 2)."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("groups", help="list and describe consumer groups")
    actions = p.add_subparsers(dest="groups_action", required=True)
    for name, helptext in (("list", "list every group"), ("describe", "members, offsets, lag")):
        a = actions.add_parser(name, help=helptext)
        if name == "describe":
            a.add_argument("group", metavar="GROUP", help="the group id")
        a.add_argument(
            "--bootstrap",
            metavar="HOST:PORT",
            default=DEFAULT_BOOTSTRAP,
            help=f"a broker to ask (default {DEFAULT_BOOTSTRAP})",
        )
        a.add_argument(
            "--timeout",
            type=float,
            default=10.0,
            metavar="SECONDS",
            help="give up after this long (default 10)",
        )
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    # The client logs each failed connection attempt as a warning; for a
    # one-shot command the single error line below says it better.
    client_log = logging.getLogger("samsa.client")
    previous = client_log.level
    client_log.setLevel(logging.ERROR)
    try:
        return _run(args, out)
    finally:
        client_log.setLevel(previous)


def _run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        with _admin(args.bootstrap, args.timeout) as admin:
            if args.groups_action == "list":
                print_list(admin, args.timeout, out)
            else:
                print_describe(admin, args.group, args.timeout, out)
    except GroupsCommandError as exc:
        print(f"samsa groups: {exc}", file=sys.stderr)
        return 2
    except SamsaError as exc:
        print(f"samsa groups: cannot reach {args.bootstrap}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"samsa groups: cannot reach {args.bootstrap}: {exc}", file=sys.stderr)
        return 2
    return 0


def _admin(bootstrap: str, timeout: float) -> Admin:
    ms = max(int(timeout * 1000), 1)
    try:
        return Admin({"bootstrap.servers": bootstrap, "request.timeout.ms": ms})
    except SamsaError as exc:
        raise GroupsCommandError(f"bad --bootstrap {bootstrap!r}: {exc}") from None


# -- list --------------------------------------------------------------------------


def print_list(admin: Admin, timeout: float, out: TextIO) -> None:
    groups = sorted(admin.list_groups(timeout=timeout), key=lambda g: g.group_id)
    rows = [(g.group_id, g.state or "-", g.protocol_type or "-") for g in groups]
    out.write(table(("GROUP", "STATE", "PROTOCOL-TYPE"), rows))


# -- describe ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionLag:
    tp: TopicPartition
    committed: int | None
    log_end: int | None
    member_id: str | None

    @property
    def lag(self) -> int | None:
        # As kafka-consumer-groups.sh: no lag without both ends known.
        if self.log_end is None or self.committed is None:
            return None
        return max(self.log_end - self.committed, 0)


def print_describe(admin: Admin, group: str, timeout: float, out: TextIO) -> None:
    desc = admin.describe_groups([group], timeout=timeout).get(group)
    committed = admin.list_consumer_group_offsets(group, timeout=timeout)
    if desc is None or (desc.state == "Dead" and not desc.members and not committed):
        raise GroupsCommandError(f"group {group!r} does not exist")
    lags = partition_lags(admin, desc, {tp: o.offset for tp, o in committed.items()}, timeout)

    out.write(
        f"GROUP {desc.group_id}  STATE {desc.state}  PROTOCOL-TYPE {desc.protocol_type or '-'}"
        f"  ASSIGNOR {desc.protocol or '-'}  MEMBERS {len(desc.members)}\n\n"
    )
    members = [
        (m.member_id, m.group_instance_id or "-", m.client_id, m.client_host, fmt_assignment(m.assignment))
        for m in sorted(desc.members, key=lambda m: m.member_id)
    ]  # fmt: skip
    out.write(table(("MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"), members))
    out.write("\n")
    rows = [
        (
            p.tp.topic, str(p.tp.partition), dash(p.committed), dash(p.log_end), dash(p.lag),
            p.member_id or "-",
        )
        for p in lags
    ]  # fmt: skip
    headers = ("TOPIC", "PARTITION", "COMMITTED-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID")
    out.write(table(headers, rows))


def partition_lags(
    admin: Admin, desc: GroupDescription, committed: dict[TopicPartition, int], timeout: float
) -> list[PartitionLag]:
    """Every partition the group owns or has committed, with its log end and lag."""
    owner: dict[TopicPartition, str] = {}
    for m in desc.members:
        for topic, parts in m.assignment.items():
            for p in parts:
                owner[TopicPartition(topic, p)] = m.member_id
    wanted = sorted(set(owner) | set(committed))
    ends: dict[TopicPartition, int] = {}
    if wanted:
        try:
            found = admin.list_offsets({tp: LATEST for tp in wanted}, timeout=timeout)
            ends = {tp: offset for tp, (offset, _ts) in found.items()}
        except SamsaError:
            # A deleted topic still has commits: show them without a log end.
            for tp in wanted:
                try:
                    found = admin.list_offsets({tp: LATEST}, timeout=timeout)
                    ends.update({k: off for k, (off, _ts) in found.items()})
                except SamsaError:
                    continue
    return [PartitionLag(tp, committed.get(tp), ends.get(tp), owner.get(tp)) for tp in wanted]


# -- formatting ------------------------------------------------------------------------


def dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def fmt_assignment(assignment: dict[str, tuple[int, ...]]) -> str:
    if not assignment:
        return "-"
    return " ".join(
        f"{topic}:{','.join(str(p) for p in sorted(parts))}"
        for topic, parts in sorted(assignment.items())
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns two spaces apart, like Kafka's own tools print."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [tuple(headers), *rows]]  # fmt: skip
    return "\n".join(lines) + "\n"
