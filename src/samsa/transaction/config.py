"""The transaction coordinator's settings, with Kafka's names and defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["TransactionConfig"]


@dataclass(frozen=True)
class TransactionConfig:
    num_partitions: int = 50
    max_timeout_ms: int = 900_000
    abort_timed_out_interval_ms: int = 10_000
    id_expiration_ms: int = 604_800_000
    marker_retry_backoff_ms: int = 100
    # How long EndTxn waits for the markers before answering (they go on after).
    end_txn_wait_ms: int = 5_000

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> TransactionConfig:
        def get(name: str, default: int) -> int:
            value = props.get(name)
            return default if value is None else int(value)

        return cls(
            num_partitions=get("transaction.state.log.num.partitions", 50),
            max_timeout_ms=get("transaction.max.timeout.ms", 900_000),
            abort_timed_out_interval_ms=get(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", 10_000
            ),
            id_expiration_ms=get("transactional.id.expiration.ms", 604_800_000),
        )
