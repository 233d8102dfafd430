"""The ``log_dirs`` of a ``samsa cluster reassign`` plan: moves between a broker's log dirs.

Kafka's reassignment JSON may say, beside each replica, the log dir it is to
live in on its broker (an absolute path; ``"any"``: wherever the broker puts
it)::

    {"topic": "orders", "partition": 0, "replicas": [1, 2], "log_dirs": ["/disk2/samsa", "any"]}

As Kafka's tool does, the moves start after the partition reassignment
(AlterReplicaLogDirs to each broker), sent again while a broker answers
REPLICA_NOT_AVAILABLE (the replica is not there yet: the broker makes it in
that dir when it comes) until ``--timeout``; any other answer (a dir the
broker lacks: LOG_DIR_NOT_FOUND) is the command's one-line error.  ``--wait``
follows them (DescribeLogDirs) until each replica's log is in its dir and no
future log is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from samsa.cli.common import CliError
from samsa.client.admin import Admin
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError

Moves = dict[tuple[TopicPartition, int], str]
"""(partition, broker) -> the log dir its replica is to live in."""
ANY = "any"
POLL_S = 0.5


def parse_log_dirs(
    entry: dict[str, Any], replicas: list[int], where: str, bad: Callable[[str, str], CliError]
) -> dict[int, str]:
    """A plan entry's ``log_dirs``: broker -> dir for each replica not left to "any"."""
    log_dirs = entry.get("log_dirs")
    if log_dirs is None:
        return {}
    if not isinstance(log_dirs, list) or len(log_dirs) != len(replicas):
        raise bad(f"{where}.log_dirs", f"must be a list of {len(replicas)} dirs, one per replica")
    moves = {}
    for broker, log_dir in zip(replicas, log_dirs, strict=True):
        if log_dir == ANY:
            continue
        if not isinstance(log_dir, str) or not PurePosixPath(log_dir).is_absolute():
            raise bad(f"{where}.log_dirs", f'must hold absolute paths or "any", not {log_dir!r}')
        moves[broker] = log_dir
    return moves


def start_moves(admin: Admin, moves: Moves, timeout: float) -> list[str]:
    """Ask each broker to move its replicas (see the module doc); one line per move started."""
    deadline = time.monotonic() + timeout
    pending = {(tp.topic, tp.partition, broker): d for (tp, broker), d in moves.items()}
    lines = []
    while pending:
        results = admin.alter_replica_log_dirs(pending, timeout=timeout)
        for key, error in sorted(results.items()):
            if error is None:
                topic, partition, broker = key
                lines.append(
                    f"Started moving {topic}-{partition} on broker {broker} to {pending.pop(key)}"
                )
            elif not (
                isinstance(error, KafkaError) and error.code == ErrorCode.REPLICA_NOT_AVAILABLE
            ):
                raise CliError(str(error))
        if pending and time.monotonic() + POLL_S > deadline:
            topic, partition, broker = min(pending)
            raise CliError(
                f"broker {broker} has no replica of {topic}-{partition} after {timeout:g} s"
            )
        if pending:
            time.sleep(POLL_S)
    return lines


def moves_pending(
    admin: Admin, moves: Moves, timeout: float
) -> dict[tuple[TopicPartition, int], str]:
    """The moves not done yet, each with a line saying where it stands."""
    wanted = {(tp.topic, tp.partition, broker): d for (tp, broker), d in moves.items()}
    found = admin.describe_replica_log_dirs(wanted, timeout=timeout)
    pending = {}
    for (topic, partition, broker), target in wanted.items():
        dirs = found[(topic, partition, broker)]
        if dirs.current_dir == target and dirs.future_dir is None:
            continue
        if dirs.future_dir is not None:
            state = f"copying to {dirs.future_dir}, {dirs.future_offset_lag} offsets behind"
        else:
            state = f"in {dirs.current_dir or 'no dir yet'}"
        tp = TopicPartition(topic, partition)
        pending[(tp, broker)] = f"{topic}-{partition} on broker {broker}: {state}"
    return pending
