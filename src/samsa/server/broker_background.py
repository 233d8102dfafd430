"""The broker's periodic work: retention, checkpoints, offset expiry, transaction timeouts.

Each runs on its own timer from ``Broker.start`` until the broker stops (the
tasks are cancelled then).  A failed pass is logged and the next one runs as
usual: retention and producer-id expiry isolate each partition's failure
(failure_log), offset expiry each group's, checkpoints each log's; the guard
here only keeps the loop alive.  The log cleaner has a thread of its own
(``cleaner_task``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from samsa.eventloop.failure_log import FailureLog
from samsa.server.broker_base import wall_ms

if TYPE_CHECKING:
    from samsa.server.broker_base import BrokerBase

log = logging.getLogger("samsa.server")


def start_periodic_tasks(broker: BrokerBase) -> list[asyncio.Task[Any]]:
    """Start every periodic task of an opened broker (its logs and replicas are there)."""
    config = broker.config
    retention = partial(_retention_pass, broker, FailureLog(log, "producer id expiry"))
    timers: list[tuple[str, Callable[[], Awaitable[None]], str]] = [
        ("log.retention.check.interval.ms", retention, "retention pass failed"),
        (
            "log.flush.offset.checkpoint.interval.ms",
            partial(_checkpoint, broker),
            "checkpoint failed",
        ),
        (
            "offsets.retention.check.interval.ms",
            partial(_expire_offsets, broker),
            "offset expiry failed",
        ),
        (
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            partial(_abort_timed_out_transactions, broker),
            "aborting timed-out transactions failed",
        ),
    ]
    return [
        asyncio.ensure_future(_every(config[interval] / 1000, run, failed))
        for interval, run, failed in timers
    ]


async def _every(interval_s: float, run: Callable[[], Awaitable[None]], failed: str) -> None:
    """``run`` every ``interval_s`` until cancelled; a failed pass is logged."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await run()
        except Exception:
            log.exception(failed)


async def _retention_pass(broker: BrokerBase, producer_id_failures: FailureLog) -> None:
    now = wall_ms()
    expiration = broker.dynamic_config["producer.id.expiration.ms"]
    # Both run each partition on its own: one partition's failure is logged
    # once and never stops the others (failure_log); the guard in ``_every``
    # only keeps the loop alive.
    broker.log_manager.run_retention(now, broker.replicas.high_watermark_of)
    for partition in broker.replicas.partitions():
        producer_id_failures.run(
            partition.log.name,
            partial(partition.producer_state.remove_expired, now, expiration),
        )


async def _checkpoint(broker: BrokerBase) -> None:
    # Off the loop: fsyncs and a walk over every log (thread-safe, each log
    # under its lock); isolates each log's failure.
    await asyncio.to_thread(broker.log_manager.flush_dirty, wall_ms())


async def _expire_offsets(broker: BrokerBase) -> None:
    if broker.groups is not None:
        await broker.groups.expire_offsets()  # isolates each group's failure


async def _abort_timed_out_transactions(broker: BrokerBase) -> None:
    if broker.transactions is not None:
        await broker.transactions.abort_timed_out()
        await broker.transactions.expire_transactional_ids()
