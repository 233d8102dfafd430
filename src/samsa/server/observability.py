"""The Prometheus endpoint: ``/metrics`` rendered by ``prometheus_client`` from
BrokerCollector at each scrape, followed by the per-partition families, which
partition_metrics writes directly (too many for the library at 10,000
partitions).  (The web console is ``console/``.)
"""

from __future__ import annotations

import asyncio

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from samsa.loop_slices import SLICE, in_slices
from samsa.server.broker_view import BrokerView
from samsa.server.http_endpoint import HttpEndpoint, Request, Response
from samsa.server.metrics import BrokerMetrics
from samsa.server.metrics_collector import build_registry
from samsa.server.partition_metrics import PartitionSample, partition_family_pieces


def metrics_endpoint(view: BrokerView, metrics: BrokerMetrics) -> HttpEndpoint:
    registry = build_registry(view, metrics)

    async def scrape(_: Request) -> Response:
        """Partitions read and written out a slice per loop callback: in one piece
        a scrape of 10,000 partitions held the loop ~100 ms (more on a busy
        machine), and every produce and fetch waited for it."""
        head = generate_latest(registry)
        rows: list[PartitionSample] = []
        async for part in in_slices(view.hosted_in_order()):
            rows.extend(view.partition_samples(part))
        text = [head]
        for piece in partition_family_pieces(rows, SLICE):
            await asyncio.sleep(0)
            text.append(piece.encode())
        return Response(200, b"".join(text), CONTENT_TYPE_LATEST)

    def index(_: Request) -> Response:
        return Response(200, b"samsa broker metrics: see /metrics\n")

    return HttpEndpoint("metrics", {"/metrics": scrape, "/": index})
