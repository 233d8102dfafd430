"""The web console: static pages (HTML, JS, CSS in this package; no build step,
nothing fetched from elsewhere) over a JSON API under ``/api/``.

One module per page of the API: ``topics`` (list and topic page), ``messages``
(the message browser), ``groups``, ``cluster``, ``actions`` (the only writes,
off unless ``console.allow.actions=true``).  The API is documented in the
README ("Web console") and kept stable for scripts.  Bad input is an
``HttpError`` answered as ``{"error": message, "status": code}``.
"""

from __future__ import annotations

import functools
import time
from importlib import resources
from typing import TYPE_CHECKING

from samsa.server.console import actions, cluster, groups, messages, share_groups, topics
from samsa.server.console.context import ConsoleContext
from samsa.server.http_endpoint import (
    HttpEndpoint,
    HttpError,
    Request,
    Response,
    json_response,
    not_found,
)

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi
    from samsa.server.broker_view import BrokerView
    from samsa.server.metrics import BrokerMetrics
    from samsa.server.router import Router

STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}


@functools.cache
def _static_file(name: str) -> bytes | None:
    """A page file of the package, read once (they never change while running)."""
    try:
        return resources.files(__name__).joinpath(name).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None


def static(request: Request) -> Response:
    name = "index.html" if request.path == "/" else request.path.removeprefix("/static/")
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or suffix not in STATIC_TYPES:
        return not_found(request.path)
    body = _static_file(name)
    if body is None:
        return not_found(request.path)
    return Response(200, body, STATIC_TYPES[suffix])


def console_endpoint(
    broker: BrokerApi, view: BrokerView, metrics: BrokerMetrics, router: Router
) -> HttpEndpoint:
    ctx = ConsoleContext(
        broker, view, metrics, router, bool(broker.config["console.allow.actions"])
    )

    def topic(request: Request) -> Response:
        name, _, what = request.path.removeprefix("/api/topics/").partition("/")
        if what == "messages":
            return messages.browse(ctx, name, request)
        if what:
            raise HttpError(404, f"no such page: {request.path}")
        return topics.describe_topic(ctx, name, request)

    def rates(_: Request) -> Response:
        """Cumulative totals with a timestamp; the page turns them into rates."""
        return json_response({"time": time.time(), **metrics.totals()})

    async def cluster_page(request: Request) -> Response:
        return await cluster.cluster(ctx, request)

    async def action(request: Request) -> Response:
        return await actions.run_action(ctx, request)

    return HttpEndpoint(
        "console",
        {
            "/": static,
            "/static/*": static,
            "/api/cluster": cluster_page,
            "/api/brokers": lambda r: cluster.brokers(ctx, r),
            "/api/topics": lambda r: topics.list_topics(ctx, r),
            "/api/topics/*": topic,
            "/api/groups": lambda r: groups.list_groups(ctx, r),
            "/api/groups/*": lambda r: groups.describe_group(
                ctx, r.path.removeprefix("/api/groups/"), r
            ),
            "/api/share-groups": lambda r: share_groups.list_share_groups(ctx, r),
            "/api/rates": rates,
            "/api/*": lambda r: _no_api(r.path),
        },
        {"/api/actions/*": action},
        json_errors=True,
    )


def _no_api(path: str) -> Response:
    raise HttpError(404, f"no such API: {path}")
