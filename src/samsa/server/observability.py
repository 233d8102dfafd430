"""The Prometheus endpoint: ``/metrics`` rendered by ``prometheus_client`` from
BrokerCollector at each scrape.  (The web console is ``console/``.)
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from samsa.server.broker_view import BrokerView
from samsa.server.http_endpoint import HttpEndpoint, Request, Response
from samsa.server.metrics import BrokerMetrics
from samsa.server.metrics_collector import build_registry


def metrics_endpoint(view: BrokerView, metrics: BrokerMetrics) -> HttpEndpoint:
    registry = build_registry(view, metrics)

    def scrape(_: Request) -> Response:
        return Response(200, generate_latest(registry), CONTENT_TYPE_LATEST)

    def index(_: Request) -> Response:
        return Response(200, b"samsa broker metrics: see /metrics\n")

    return HttpEndpoint("metrics", {"/metrics": scrape, "/": index})
