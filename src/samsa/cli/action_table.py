"""A command's actions as one table, instead of the same argparse set-up per action.

``samsa groups``, ``share-groups``, ``transactions``, ``cluster``, ``acls`` and
``users scram`` each have several actions that differ only in their own
arguments: every action also takes the connection flags, many take
``--output``, and every one runs guarded (one line and exit 2 on a user
error).  Writing that per action repeated five lines each time and let the
commands drift apart; an :class:`Action` row says only what is particular to
the action, and :func:`add_actions` builds the rest the same way for all.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from samsa.cli.common import add_connection_args, add_output_arg, add_subcommand, guarded


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """An action that takes only the shared flags."""


@dataclass(frozen=True, slots=True)
class Action:
    """One row: an action's name, help, example, work and own arguments."""

    name: str
    help: str
    example: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], object] = _no_arguments
    """Adds the action's own arguments (before the shared flags, as ``--help`` lists them)."""
    output: bool = False
    """Whether it takes ``--output table|json``."""
    timeout: float = 10.0
    """The default of ``--timeout`` (seconds)."""


def add_command(
    sub: Any,
    name: str,
    help_text: str,
    epilog: str,
    actions: Sequence[Action],
    *,
    description: str | None = None,
) -> None:
    """``samsa NAME ACTION ...``: a command whose actions all come from ``actions``."""
    parser = sub.add_parser(
        name,
        help=help_text,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_actions(parser, f"{name.replace('-', '_')}_action", name, actions)


def add_actions(
    parser: argparse.ArgumentParser, dest: str, label: str, actions: Sequence[Action]
) -> None:
    """Add ``actions`` to ``parser`` as its required ACTION; errors name ``samsa LABEL``."""
    sub = parser.add_subparsers(dest=dest, required=True, metavar="ACTION")
    for action in actions:
        a = add_subcommand(sub, action.name, action.help, action.example)
        action.arguments(a)
        add_connection_args(a, timeout=action.timeout)
        if action.output:
            add_output_arg(a)
        a.set_defaults(run=guarded(label, action.run))
