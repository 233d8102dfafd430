"""The remote log manager's settings, read from the broker's (Kafka's names)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samsa.replication.tiering.metadata_topic import MetadataTopicSettings
from samsa.tiered.orphans import DEFAULT_GRACE_MS

__all__ = ["TieringSettings"]

_RLMM = "rlmm.config.remote.log.metadata."
_RLMM_TOPIC = _RLMM + "topic."


@dataclass(frozen=True, slots=True)
class TieringSettings:
    task_interval_ms: int = 30_000
    """remote.log.manager.task.interval.ms: copy, expiration and follower runs."""
    reader_threads: int = 10
    """remote.log.reader.threads: remote reads at once."""
    reader_max_pending: int = 100
    """remote.log.reader.max.pending.tasks: remote reads waiting at most."""
    fetch_max_wait_ms: int = 500
    """remote.fetch.max.wait.ms: the longest a fetch waits for the store."""
    list_offsets_timeout_ms: int = 30_000
    """remote.list.offsets.request.timeout.ms."""
    copy_max_bytes_per_second: int = 2**63 - 1
    copy_quota_windows: int = 11
    copy_quota_window_s: int = 1
    fetch_max_bytes_per_second: int = 2**63 - 1
    fetch_quota_windows: int = 11
    fetch_quota_window_s: int = 1
    index_cache_bytes: int = 1024 * 1024 * 1024
    """remote.log.index.file.cache.total.size.bytes."""
    orphan_grace_ms: int = DEFAULT_GRACE_MS
    """remote.log.manager.orphan.grace.ms (Samsa's): when dangling copies and
    orphan objects are cleaned (``samsa.tiered.orphans``)."""
    metadata: MetadataTopicSettings = field(default_factory=MetadataTopicSettings)

    @classmethod
    def from_lookup(cls, get: Callable[[str], Any]) -> TieringSettings:
        """From the broker's settings (``config.__getitem__`` or the dynamic view)."""
        return cls(
            task_interval_ms=int(get("remote.log.manager.task.interval.ms")),
            reader_threads=int(get("remote.log.reader.threads")),
            reader_max_pending=int(get("remote.log.reader.max.pending.tasks")),
            fetch_max_wait_ms=int(get("remote.fetch.max.wait.ms")),
            list_offsets_timeout_ms=int(get("remote.list.offsets.request.timeout.ms")),
            copy_max_bytes_per_second=int(get("remote.log.manager.copy.max.bytes.per.second")),
            copy_quota_windows=max(2, int(get("remote.log.manager.copy.quota.window.num"))),
            copy_quota_window_s=int(get("remote.log.manager.copy.quota.window.size.seconds")),
            fetch_max_bytes_per_second=int(get("remote.log.manager.fetch.max.bytes.per.second")),
            fetch_quota_windows=max(2, int(get("remote.log.manager.fetch.quota.window.num"))),
            fetch_quota_window_s=int(get("remote.log.manager.fetch.quota.window.size.seconds")),
            index_cache_bytes=int(get("remote.log.index.file.cache.total.size.bytes")),
            orphan_grace_ms=int(get("remote.log.manager.orphan.grace.ms")),
            metadata=MetadataTopicSettings(
                partitions=int(get(_RLMM_TOPIC + "num.partitions")),
                replication_factor=int(get(_RLMM_TOPIC + "replication.factor")),
                retention_ms=int(get(_RLMM_TOPIC + "retention.ms")),
                consume_wait_ms=int(get(_RLMM + "consume.wait.ms")),
                initialization_timeout_ms=int(get(_RLMM + "initialization.retry.max.timeout.ms")),
                initialization_retry_ms=int(get(_RLMM + "initialization.retry.interval.ms")),
            ),
        )
