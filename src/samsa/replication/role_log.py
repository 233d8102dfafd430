"""Logging leadership changes: a line per partition for a few, a summary for many.

A broker taking over 10,000 partitions at start-up (or when a peer dies)
used to log a line per partition at INFO; writing them took seconds of the
event loop.  The replica manager now hands each applied metadata batch's new
leaders and followers here: up to ``NAMED`` of them get their own INFO line
as before (``[orders-0] leader at epoch 3 ...``, which operators and
bench/replication/_failover.py read), more get one line that counts them and
names the first few, with every partition's line at DEBUG.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from samsa.replication.partition import Partition

log = logging.getLogger("samsa.replication.partition")

NAMED = 10
"""Partitions logged one by one at INFO; past that, one summary line."""


def log_role_changes(role: str, partitions: Sequence[Partition]) -> None:
    """``role``: "leader" or "follower"; ``partitions``: those that newly took it."""
    if not partitions:
        return
    level = logging.INFO if len(partitions) <= NAMED else logging.DEBUG
    if log.isEnabledFor(level):
        for p in partitions:
            log.log(
                level,
                "[%s] %s at epoch %d from offset %d (partition epoch %d, high watermark %d)",
                p.name,
                "leader" if role == "leader" else f"follower of {p.leader_id}",
                p.leader_epoch,
                p.log.log_end_offset,
                p.partition_epoch,
                p.high_watermark,
            )
    if level == logging.DEBUG and log.isEnabledFor(logging.INFO):
        log.info(
            "%s of %d partitions: %s and %d more",
            role,
            len(partitions),
            ", ".join(f"{p.name} (epoch {p.leader_epoch})" for p in partitions[:NAMED]),
            len(partitions) - NAMED,
        )
