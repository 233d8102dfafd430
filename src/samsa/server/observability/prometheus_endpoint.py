"""The Prometheus endpoint: ``/metrics`` rendered by ``prometheus_client`` from
BrokerCollector at each scrape, followed by the per-partition families, which
partition_metrics writes directly (too many for the library at 10,000
partitions).  TLS, Host names and HTTP Basic logins come with ``security``
(``http_security``).  (The web console is ``samsa.console``.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric

from samsa.eventloop.loop_slices import SLICE, in_slices
from samsa.http.endpoint import EndpointSecurity, HttpEndpoint, Request, Response
from samsa.server.metadata.broker_view import BrokerView
from samsa.server.observability.metrics import BrokerMetrics
from samsa.server.observability.metrics_collector import build_registry
from samsa.server.observability.partition_metrics import (
    PARTITION_FAMILIES,
    PartitionSample,
    partition_family_pieces,
)

SAMPLE_SLICE = 250
"""Partitions sampled per loop callback: reading one costs ~15 us quiet (its log's
segments, watermarks, open transactions), 4-5 times that on a loaded machine."""


def metrics_endpoint(
    view: BrokerView, metrics: BrokerMetrics, security: EndpointSecurity | None = None
) -> HttpEndpoint:
    registry = build_registry(view, metrics)

    async def scrape(request: Request) -> Response:
        """Partitions read and written out a slice per loop callback: in one piece
        a scrape of 10,000 partitions held the loop ~100 ms (more on a busy
        machine), and every produce and fetch waited for it.

        ``?name[]=FAMILY`` (as prometheus_client's own handler) answers that
        family alone: a poller waiting for one gauge (``samsa_partitions``)
        need not cost the broker ~200 ms of CPU for 70,000 partition samples."""
        only = request.query.get("name[]")
        if only is not None and only not in PARTITION_FAMILIES:
            return Response(200, generate_latest(_Only(registry, only)), CONTENT_TYPE_LATEST)
        head = b"" if only is not None else generate_latest(registry)
        rows: list[PartitionSample] = []
        async for part in in_slices(view.hosted_in_order(), SAMPLE_SLICE):
            rows.extend(view.partition_samples(part))
        text = [head]
        for piece in partition_family_pieces(rows, SLICE, only):
            await asyncio.sleep(0)
            text.append(piece.encode())
        return Response(200, b"".join(text), CONTENT_TYPE_LATEST)

    def index(_: Request) -> Response:
        return Response(200, b"samsa broker metrics: see /metrics\n")

    return HttpEndpoint("metrics", {"/metrics": scrape, "/": index}, security=security)


class _Only:
    """The one family of ``registry`` named ``name`` (a registry to generate_latest).

    Collectors yield families lazily and a name is yielded once, so the
    families after it are never computed (the partition health that follows
    ``samsa_partitions`` walks every partition this broker leads)."""

    def __init__(self, registry: CollectorRegistry, name: str) -> None:
        self._registry = registry
        self._name = name

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            if family.name == self._name:
                yield family
                return
