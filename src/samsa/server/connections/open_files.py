"""Raise the process's open-file limit at start, as Kafka's operators are told to.

A broker keeps each partition's active segment open (its ``.log`` and, while it
is being written, its two indexes), and every client and replica connection is
a descriptor too.  Distributions start processes with a soft limit of 1,024
(or a hard limit of a few tens of thousands), which a broker of a few thousand
partitions exhausts; Kafka's documentation asks for at least 100,000.  So the
broker raises its soft limit to that (never lowers it), and, running as root
(CAP_SYS_RESOURCE), the hard limit too, up to the kernel's ``fs.nr_open``.
Where it cannot, it says so once, with the advice, and runs with what it got.
"""

from __future__ import annotations

import logging
import resource
from pathlib import Path

log = logging.getLogger("samsa.server")

WANTED_OPEN_FILES = 100_000
"""Kafka's documented starting point for a broker's file descriptor limit."""
NR_OPEN = Path("/proc/sys/fs/nr_open")


def kernel_ceiling() -> int:
    """The most any process may be allowed (``fs.nr_open``), where known."""
    try:
        return int(NR_OPEN.read_text())
    except (OSError, ValueError):
        return WANTED_OPEN_FILES


def raise_open_files_limit(wanted: int = WANTED_OPEN_FILES) -> int:
    """Raise RLIMIT_NOFILE towards ``wanted``; return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft
    target = min(wanted, kernel_ceiling())
    if hard != resource.RLIM_INFINITY and hard < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, target))
        except (OSError, ValueError):
            pass  # not privileged: take the hard limit below
        else:
            log.info("open file limit raised from %d (hard %d) to %d", soft, hard, target)
            return target
        target = hard
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        log.info("open file limit raised from %d to %d", soft, target)
    if target < wanted:
        log.warning(
            "open file limit is %d (hard limit %s): a broker with many partitions and "
            "connections may run out of file descriptors; Kafka recommends at least %d "
            "(raise it with `ulimit -n` or LimitNOFILE= in the service unit)",
            target,
            hard,
            wanted,
        )
    return target
