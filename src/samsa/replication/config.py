"""The broker settings replication reads, by Kafka's names.

A frozen value built once by the node wiring, so the replication package does
not depend on the server's configuration class: ``from_lookup`` takes any
``name -> value`` callable (``BrokerConfig.__getitem__`` works) and keeps
Kafka's default for a key the lookup does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ReplicationConfig"]


@dataclass(frozen=True, slots=True)
class ReplicationConfig:
    """Kafka's defaults; ``truncate_on_fetch`` False makes followers find their
    divergence with OffsetForLeaderEpoch before fetching (Kafka before 2.7 /
    IBP < 2.7), the fallback for leaders that do not send ``diverging_epoch``."""

    replica_lag_time_max_ms: int = 30_000
    replica_fetch_max_bytes: int = 1_048_576
    replica_fetch_response_max_bytes: int = 10_485_760
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_min_bytes: int = 1
    replica_fetch_backoff_ms: int = 1_000
    num_replica_fetchers: int = 1
    replica_high_watermark_checkpoint_interval_ms: int = 5_000
    alter_partition_retry_backoff_ms: int = 100
    truncate_on_fetch: bool = True

    @classmethod
    def from_lookup(cls, lookup: Callable[[str], object]) -> ReplicationConfig:
        """Read every key through ``lookup``; a KeyError keeps Kafka's default."""
        defaults = cls()

        def get(key: str, default: int) -> int:
            try:
                raw = lookup(key)
            except KeyError:
                return default
            return int(str(raw))

        return cls(
            replica_lag_time_max_ms=get(
                "replica.lag.time.max.ms", defaults.replica_lag_time_max_ms
            ),
            replica_fetch_max_bytes=get(
                "replica.fetch.max.bytes", defaults.replica_fetch_max_bytes
            ),
            replica_fetch_response_max_bytes=get(
                "replica.fetch.response.max.bytes", defaults.replica_fetch_response_max_bytes
            ),
            replica_fetch_wait_max_ms=get(
                "replica.fetch.wait.max.ms", defaults.replica_fetch_wait_max_ms
            ),
            replica_fetch_min_bytes=get(
                "replica.fetch.min.bytes", defaults.replica_fetch_min_bytes
            ),
            replica_fetch_backoff_ms=get(
                "replica.fetch.backoff.ms", defaults.replica_fetch_backoff_ms
            ),
            num_replica_fetchers=get("num.replica.fetchers", defaults.num_replica_fetchers),
            replica_high_watermark_checkpoint_interval_ms=get(
                "replica.high.watermark.checkpoint.interval.ms",
                defaults.replica_high_watermark_checkpoint_interval_ms,
            ),
            alter_partition_retry_backoff_ms=get(
                "retry.backoff.ms", defaults.alter_partition_retry_backoff_ms
            ),
        )
