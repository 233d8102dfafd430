"""The broker's metrics in Prometheus' exposition format, built when scraped.

A ``prometheus_client`` Collector: counters kept by BrokerMetrics and state
read through BrokerView become metric families at scrape time, so nothing is
computed between scrapes.  Names follow Prometheus conventions
(``samsa_<what>_total`` for counters, ``_bytes``/``_seconds`` units).
Replication health comes from the metadata image: under-replicated
partitions this broker leads, offline partitions of the cluster, and the ISR
shrinks and expands of partitions led here (counted as the controller's
records arrive).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from samsa.protocol.messages import APIS
from samsa.server.metadata.broker_view import BrokerView
from samsa.server.observability.metrics import LATENCY_BUCKETS, BrokerMetrics
from samsa.storage.files.flush_timing import BUCKETS_SECONDS, FLUSH_TIMINGS


def _histogram_buckets(bounds: tuple[float, ...], counts: list[int]) -> list[tuple[str, float]]:
    """Per-bucket counts -> Prometheus' cumulative (le, count) pairs, +Inf last."""
    out, running = [], 0
    for bound, count in zip(bounds, counts, strict=False):
        running += count
        out.append((repr(bound), float(running)))
    out.append(("+Inf", float(running + counts[-1])))
    return out


class BrokerCollector(Collector):
    def __init__(self, view: BrokerView, metrics: BrokerMetrics) -> None:
        self.view = view
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        yield from self._traffic()
        yield from self._requests()
        yield from self._partitions()
        yield from self._groups()
        yield from self._transactions()
        yield from self._storage()
        yield from _throttle_families(self.view)
        yield from _remote_storage_families(self.view)

    def _traffic(self) -> Iterator[Metric]:
        m = self.metrics
        for name, doc, values in (
            ("samsa_topic_bytes_in", "Bytes produced to a topic.", m.bytes_in),
            ("samsa_topic_records_in", "Records produced to a topic.", m.records_in),
            ("samsa_topic_bytes_out", "Bytes fetched from a topic.", m.bytes_out),
            (
                "samsa_topic_records_out",
                "Records fetched from a topic (consumer position advance).",
                m.records_out,
            ),
        ):
            family = CounterMetricFamily(name, doc, labels=["topic"])
            for topic, value in sorted(values.items()):
                family.add_metric([topic], value)
            yield family
        clients = GaugeMetricFamily(
            "samsa_connections",
            "Open connections by the client software they announced (ApiVersions v3+).",
            labels=["client_software_name", "client_software_version"],
        )
        for (software, version), count in sorted(m.connected_clients().items()):
            clients.add_metric([software, version], count)
        yield clients

    def _requests(self) -> Iterator[Metric]:
        labels = ["api", "version"]
        total = CounterMetricFamily("samsa_requests", "Requests handled.", labels=labels)
        errors = CounterMetricFamily(
            "samsa_request_errors",
            "Requests answered with a top-level error code or failed in the handler.",
            labels=labels,
        )
        latency = HistogramMetricFamily(
            "samsa_request_latency_seconds",
            "Time from decoded request to encoded response.",
            labels=labels,
        )
        for (key, version), stats in sorted(self.metrics.requests.items()):
            names = [APIS[key].name if key in APIS else str(key), str(version)]
            total.add_metric(names, stats.count)
            errors.add_metric(names, stats.errors)
            latency.add_metric(
                names, _histogram_buckets(LATENCY_BUCKETS, stats.buckets), stats.seconds
            )
        yield from (total, errors, latency)
        purgatory = GaugeMetricFamily(
            "samsa_purgatory_size", "Requests waiting in purgatory.", labels=["purgatory"]
        )
        purgatory.add_metric(["fetch"], self.view.parked_fetches())
        purgatory.add_metric(["produce"], 0)  # acks=all completes at once on one node
        yield purgatory
        sent, received = self.view.replica_fetch_bytes()
        fetched = CounterMetricFamily(
            "samsa_replica_fetch_bytes",
            "Bytes this broker's replica fetchers sent to and received from leaders.",
            labels=["direction"],
        )
        fetched.add_metric(["sent"], sent)
        fetched.add_metric(["received"], received)
        yield fetched
        yield GaugeMetricFamily(
            "samsa_fetch_sessions",
            "Incremental fetch sessions held.",
            value=self.view.fetch_sessions(),
        )

    def _partitions(self) -> Iterator[Metric]:
        count = self.view.partition_count()  # the families per partition: partition_metrics
        yield GaugeMetricFamily("samsa_partitions", "Partitions hosted here.", value=count)
        under, offline = self.view.partition_health()
        yield GaugeMetricFamily(
            "samsa_under_replicated_partitions",
            "Partitions this broker leads whose ISR is smaller than their replica set.",
            value=under,
        )
        yield GaugeMetricFamily(
            "samsa_offline_partitions", "Partitions of the cluster without a leader.", value=offline
        )
        yield CounterMetricFamily(
            "samsa_isr_shrinks",
            "ISR shrinks of partitions led here.",
            value=self.metrics.isr_shrinks,
        )
        yield CounterMetricFamily(
            "samsa_isr_expands",
            "ISR expands of partitions led here.",
            value=self.metrics.isr_expands,
        )

    def _groups(self) -> Iterator[Metric]:
        labels = ["group", "topic", "partition"]
        lag = GaugeMetricFamily(
            "samsa_consumer_group_lag",
            "High watermark minus the group's committed offset.",
            labels=labels,
        )
        committed = GaugeMetricFamily(
            "samsa_consumer_group_committed_offset", "The group's committed offset.", labels=labels
        )
        members = GaugeMetricFamily(
            "samsa_consumer_group_members", "Members of a group.", labels=["group", "state"]
        )
        for group in self.view.groups():
            members.add_metric([group.group_id, group.state], len(group.members))
            for (topic, partition), offset in sorted(group.committed.items()):
                values = [group.group_id, topic, str(partition)]
                committed.add_metric(values, offset)
                hw = self.view.high_watermark(topic, partition)
                if hw is not None:
                    lag.add_metric(values, max(hw - offset, 0))
        yield from (lag, committed, members)

    def _transactions(self) -> Iterator[Metric]:
        states = GaugeMetricFamily(
            "samsa_transactions",
            "Transactional ids this broker coordinates, by state.",
            labels=["state"],
        )
        for state, count in sorted(self.view.transaction_states().items()):
            states.add_metric([state], count)
        yield states

    def _storage(self) -> Iterator[Metric]:
        counts, total = FLUSH_TIMINGS.snapshot()
        flush = HistogramMetricFamily(
            "samsa_storage_flush_seconds", "Time to fsync a log's segments."
        )
        flush.add_metric([], _histogram_buckets(BUCKETS_SECONDS, counts), total)
        yield flush
        dirs = self.view.log_dirs()
        offline = GaugeMetricFamily(
            "samsa_log_dir_offline",
            "1 once an I/O error took the log dir offline (until a restart).",
            labels=["log_dir"],
        )
        for log_dir, error in sorted(dirs.items()):
            offline.add_metric([log_dir], 0 if error is None else 1)
        yield offline
        yield GaugeMetricFamily(
            "samsa_offline_log_dirs",
            "Log dirs taken offline by an I/O error (Kafka's OfflineLogDirectoryCount).",
            value=sum(error is not None for error in dirs.values()),
        )
        stats = self.view.cleaner_stats()
        if stats is None:
            return
        yield CounterMetricFamily(
            "samsa_log_cleaner_passes", "Log cleaner passes run.", value=stats.passes
        )
        yield CounterMetricFamily(
            "samsa_log_cleaner_logs_cleaned", "Logs compacted.", value=stats.logs_cleaned
        )
        yield CounterMetricFamily(
            "samsa_log_cleaner_reclaimed_bytes",
            "Bytes reclaimed by compaction.",
            value=stats.bytes_reclaimed,
        )
        uncleanable = GaugeMetricFamily(
            "samsa_log_cleaner_uncleanable_partitions",
            "Partitions the cleaner gave up on (1 per partition).",
            labels=["partition"],
        )
        for name in sorted(dict(stats.uncleanable)):
            uncleanable.add_metric([name], 1)
        yield uncleanable


def _throttle_families(view: BrokerView) -> Iterator[Metric]:
    """Kafka's per-quota-type ``throttle-time`` sensors, as totals."""
    throttled = view.client_throttling()
    time_ms = CounterMetricFamily(
        "samsa_client_throttle_time_ms",
        "Throttle time sent to clients over their quota (KIP-219 mutes), by quota type.",
        labels=["quota_type"],
    )
    count = CounterMetricFamily(
        "samsa_client_throttled_responses",
        "Responses that throttled a client, by quota type.",
        labels=["quota_type"],
    )
    for quota_type, total in throttled.total_ms.items():
        time_ms.add_metric([quota_type.value], total)
        count.add_metric([quota_type.value], throttled.count[quota_type])
    yield from (time_ms, count)


_REMOTE_METERS = (
    ("copy_bytes", "Bytes copied to the remote tier (Kafka's RemoteCopyBytesPerSec)."),
    ("copy_requests", "Segments copy attempts (RemoteCopyRequestsPerSec)."),
    ("copy_errors", "Segment copies that failed (RemoteCopyErrorsPerSec)."),
    ("fetch_bytes", "Bytes read from the remote tier (RemoteFetchBytesPerSec)."),
    ("fetch_requests", "Range reads of remote segments (RemoteFetchRequestsPerSec)."),
    ("fetch_errors", "Remote reads that failed (RemoteFetchErrorsPerSec)."),
    ("delete_requests", "Remote segment deletions (RemoteDeleteRequestsPerSec)."),
    ("delete_errors", "Remote segment deletions that failed (RemoteDeleteErrorsPerSec)."),
)
_REMOTE_GAUGES = (
    (
        "samsa_remote_copy_lag_bytes",
        "Bytes of rolled segments not copied yet, of partitions led here (RemoteCopyLagBytes).",
        "copy_lag_bytes",
    ),
    (
        "samsa_remote_copy_lag_segments",
        "Rolled segments not copied yet, of partitions led here (RemoteCopyLagSegments).",
        "copy_lag_segments",
    ),
    (
        "samsa_remote_log_size_bytes",
        "Bytes in the remote tier of partitions led here (RemoteLogSizeBytes).",
        "remote_log_size_bytes",
    ),
    (
        "samsa_remote_log_metadata_count",
        "Remote segments in the metadata of partitions led here (RemoteLogMetadataCount).",
        "remote_log_metadata_count",
    ),
)


def _remote_storage_families(view: BrokerView) -> Iterator[Metric]:
    """Kafka's remote-storage BrokerTopicMetrics, per topic; nothing when tiering is off."""
    stats = view.remote_storage()
    if stats is None:
        return
    for name, doc in _REMOTE_METERS:
        family = CounterMetricFamily(f"samsa_remote_{name}", doc, labels=["topic"])
        for topic, value in sorted(stats.counters[name].items()):
            family.add_metric([topic], value)
        yield family
    for metric, doc, attr in _REMOTE_GAUGES:
        gauge = GaugeMetricFamily(metric, doc, labels=["topic"])
        for topic, value in sorted(getattr(stats, attr).items()):
            gauge.add_metric([topic], value)
        yield gauge
    yield GaugeMetricFamily(
        "samsa_remote_log_reader_queue_size",
        "Remote reads waiting for a reader (RemoteLogReaderTaskQueueSize).",
        value=stats.reader_queue_size,
    )
    yield GaugeMetricFamily(
        "samsa_remote_log_metadata_not_ready_partitions",
        "Tiered partitions here whose __remote_log_metadata is not replayed yet.",
        value=stats.metadata_not_ready,
    )
    yield CounterMetricFamily(
        "samsa_remote_log_metadata_replay_timeouts",
        "Replays of a partition's remote metadata that ran out of time (each logged).",
        value=stats.metadata_replay_timeouts,
    )


def build_registry(view: BrokerView, metrics: BrokerMetrics) -> CollectorRegistry:
    """A registry of its own: nothing but the broker's metrics (no process defaults
    shared with other code in the same interpreter, e.g. tests)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(view, metrics))
    return registry
