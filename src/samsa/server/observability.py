"""The two read-only HTTP endpoints: Prometheus metrics and the web console.

``/metrics`` is rendered by ``prometheus_client`` from BrokerCollector at each
scrape.  The console is a static page (``console/``: HTML, JS and CSS shipped
in the package, no build step, nothing fetched from elsewhere) that polls a
small JSON API under ``/api/``; the JSON is built from BrokerView, so the page
shows exactly what the broker holds and can change none of it.  Record keys
and values are previewed safely: UTF-8 text is shown (truncated), anything
else as hex with its size.
"""

from __future__ import annotations

import json
import time
from importlib import resources
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from samsa.server.broker_view import BrokerView
from samsa.server.http_endpoint import HttpEndpoint, Request, Response, not_found
from samsa.server.metrics import BrokerMetrics
from samsa.server.metrics_collector import build_registry

PREVIEW_CHARS = 200
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}


def metrics_endpoint(view: BrokerView, metrics: BrokerMetrics) -> HttpEndpoint:
    registry = build_registry(view, metrics)

    def scrape(_: Request) -> Response:
        return Response(200, generate_latest(registry), CONTENT_TYPE_LATEST)

    def index(_: Request) -> Response:
        return Response(200, b"samsa broker metrics: see /metrics\n")

    return HttpEndpoint("metrics", {"/metrics": scrape, "/": index})


def preview(data: bytes | None) -> dict[str, Any] | None:
    """A safe rendering of bytes for the page: text if UTF-8, hex otherwise."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"binary": True, "size": len(data), "text": data[:64].hex(" ")}
    return {"binary": False, "size": len(data), "text": text[:PREVIEW_CHARS]}


def _json(value: Any) -> Response:
    return Response(200, json.dumps(value).encode(), "application/json")


class ConsoleApi:
    """The JSON the console page polls."""

    def __init__(self, view: BrokerView, metrics: BrokerMetrics) -> None:
        self.view = view
        self.metrics = metrics

    def cluster(self, _: Request) -> Response:
        return _json({**self.view.cluster(), "uptime_s": round(time.time() - self.metrics.started)})

    def topics(self, _: Request) -> Response:
        topics: dict[str, dict[str, Any]] = {}
        for p in self.view.partitions():
            t = topics.setdefault(
                p.topic, {"name": p.topic, "partitions": 0, "size_bytes": 0, "records": 0}
            )
            t["partitions"] += 1
            t["size_bytes"] += p.size_bytes
            t["records"] += p.log_end_offset - p.log_start_offset
        return _json(sorted(topics.values(), key=lambda t: t["name"]))

    def topic(self, request: Request) -> Response:
        rest = request.path.removeprefix("/api/topics/")
        name, _, what = rest.partition("/")
        partitions = [p for p in self.view.partitions() if p.topic == name]
        if not partitions:
            return not_found(request.path)
        if what == "records":
            limit = min(max(int(request.query.get("limit", "20") or 20), 1), 200)
            records = [
                {
                    **r,
                    "key": preview(r["key"]),
                    "value": preview(r["value"]),
                    "headers": [{"key": k, "value": preview(v)} for k, v in r["headers"]],
                }
                for r in self.view.latest_records(name, limit)
            ]
            return _json(records)
        if what:
            return not_found(request.path)
        return _json(
            {
                "name": name,
                "partitions": [
                    {
                        "partition": p.partition,
                        "leader": p.leader,
                        "replicas": list(p.replicas),
                        "isr": list(p.isr),
                        "log_start_offset": p.log_start_offset,
                        "log_end_offset": p.log_end_offset,
                        "high_watermark": p.high_watermark,
                        "size_bytes": p.size_bytes,
                        "segments": p.segments,
                    }
                    for p in partitions
                ],
                "configs": self.view.topic_configs(name),
            }
        )

    def groups(self, _: Request) -> Response:
        out = []
        for g in self.view.groups():
            partitions: list[dict[str, Any]] = []
            total_lag = 0
            for (topic, partition), offset in sorted(g.committed.items()):
                hw = self.view.high_watermark(topic, partition)
                owner = next(
                    (m.member_id for m in g.members if partition in m.assignment.get(topic, ())),
                    None,
                )
                lag = None if hw is None else max(hw - offset, 0)
                total_lag += lag or 0
                partitions.append(
                    {
                        "topic": topic,
                        "partition": partition,
                        "committed_offset": offset,
                        "log_end_offset": hw,
                        "lag": lag,
                        "member_id": owner,
                    }
                )
            out.append(
                {
                    "group": g.group_id,
                    "state": g.state,
                    "protocol_type": g.protocol_type,
                    "assignor": g.protocol,
                    "members": [
                        {
                            "member_id": m.member_id,
                            "client_id": m.client_id,
                            "host": m.client_host,
                            "assignment": m.assignment,
                        }
                        for m in g.members
                    ],
                    "partitions": partitions,
                    "lag": total_lag,
                }
            )
        return _json(out)

    def rates(self, _: Request) -> Response:
        """Cumulative totals with a timestamp; the page turns them into rates."""
        return _json({"time": time.time(), **self.metrics.totals()})


def static(request: Request) -> Response:
    name = "index.html" if request.path == "/" else request.path.removeprefix("/static/")
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or suffix not in STATIC_TYPES:
        return not_found(request.path)
    try:
        body = resources.files("samsa.server").joinpath("console", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return not_found(request.path)
    return Response(200, body, STATIC_TYPES[suffix])


def console_endpoint(view: BrokerView, metrics: BrokerMetrics) -> HttpEndpoint:
    api = ConsoleApi(view, metrics)
    return HttpEndpoint(
        "console",
        {
            "/": static,
            "/static/*": static,
            "/api/cluster": api.cluster,
            "/api/topics": api.topics,
            "/api/topics/*": api.topic,
            "/api/groups": api.groups,
            "/api/rates": api.rates,
        },
    )
