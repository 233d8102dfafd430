"""The Prometheus endpoint: ``/metrics`` rendered by ``prometheus_client`` from
BrokerCollector at each scrape, followed by the per-partition families, which
partition_metrics writes directly (too many for the library at 10,000
partitions).  (The web console is ``console/``.)
"""

from __future__ import annotations

import asyncio

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from samsa.server.broker_view import BrokerView
from samsa.server.http_endpoint import HttpEndpoint, Request, Response
from samsa.server.metrics import BrokerMetrics
from samsa.server.metrics_collector import build_registry
from samsa.server.partition_metrics import render_partition_families


def metrics_endpoint(view: BrokerView, metrics: BrokerMetrics) -> HttpEndpoint:
    registry = build_registry(view, metrics)

    async def scrape(_: Request) -> Response:
        head = generate_latest(registry)
        rows = list(view.partition_samples())  # read on the loop, written out beside it
        tail = await asyncio.to_thread(render_partition_families, rows)
        return Response(200, head + tail, CONTENT_TYPE_LATEST)

    def index(_: Request) -> Response:
        return Response(200, b"samsa broker metrics: see /metrics\n")

    return HttpEndpoint("metrics", {"/metrics": scrape, "/": index})
