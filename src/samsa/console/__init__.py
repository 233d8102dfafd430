"""The web console: static pages over a JSON API, acting as the logged-in user.

The pages are HTML, JS and CSS in this package (no build step, nothing fetched
from elsewhere); the JSON API is under ``/api/``.

One module per page of the API: ``topics`` (list and topic page), ``configs``
(a topic's or this broker's, with units), ``messages`` (the message browser, with
``schemas.values`` decoding records with their schemas), ``search`` (a whole topic, in
slices), ``groups``, ``topic_consumers``, ``share_groups``, ``cluster``,
``security_views`` (ACLs, SCRAM users, quotas), ``schemas`` (the schema registry's subjects),
``actions`` (the only writes, off unless
``console.allow.actions=true``).  The pages' files are in ``static/``.  The console sees the broker only
through ``broker_port.ConsoleBroker`` and acts as the user logged in to it
(``samsa.http.login``), through the broker's authorizer.  The API is
documented in ``docs/console-and-metrics.md`` and kept stable for scripts.  Bad
input is an ``HttpError`` answered as ``{"error": message, "status": code}``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from samsa.console import (
    actions,
    cluster,
    configs,
    groups,
    messages,
    search,
    security_views,
    share_groups,
    topic_consumers,
    topics,
)
from samsa.console.broker_port import ConsoleBroker
from samsa.console.context import ConsoleContext
from samsa.console.schemas import subjects
from samsa.http.endpoint import EndpointSecurity, HttpEndpoint
from samsa.http.login import SessionLogin
from samsa.http.messages import HttpError, Request, Response, json_response, not_found
from samsa.http.routes import Handler

STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
PUBLIC_PATHS = ("/", "/static/*")
"""Served before a login: the pages and their files (which hold no data)."""


@functools.cache
def _static_file(name: str) -> bytes | None:
    """A page file of the package (``static/``), read once (they never change while running)."""
    try:
        return resources.files(__name__).joinpath("static", name).read_bytes()
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
    broker: ConsoleBroker, *, allow_actions: bool, security: EndpointSecurity | None = None
) -> HttpEndpoint:
    """The console's endpoint; when ``security``'s gate is a ``SessionLogin``,
    every API call but the login's needs a session, and acts as its user."""
    base = ConsoleContext(broker, allow_actions)
    security = security or EndpointSecurity()
    login = security.gate if isinstance(security.gate, SessionLogin) else None

    def as_caller(page: Callable[[ConsoleContext, Request], Any]) -> Handler:
        return lambda request: page(base.for_request(request), request)

    def topic(ctx: ConsoleContext, request: Request) -> Response | Awaitable[Response]:
        name, _, what = request.path.removeprefix("/api/topics/").partition("/")
        if what == "messages":
            return messages.browse(ctx, name, request)
        if what == "search":
            return search.search(ctx, name, request)
        if what == "consumers":
            return topic_consumers.topic_consumers(ctx, name, request)
        if what:
            raise HttpError(404, f"no such page: {request.path}")
        return topics.describe_topic(ctx, name, request)

    def broker_page(ctx: ConsoleContext, request: Request) -> Response:
        node, _, what = request.path.removeprefix("/api/brokers/").partition("/")
        if what != "configs":
            raise HttpError(404, f"no such page: {request.path}")
        return configs.broker_configs(ctx, node, request)

    def rates(ctx: ConsoleContext, _: Request) -> Response:
        """Cumulative totals with a timestamp; the page turns them into rates
        (with ACLs on, over the topics the caller may DESCRIBE)."""
        counters = ctx.metrics
        if not ctx.broker.authorizer_on:
            return json_response({"time": time.time(), **counters.totals()})
        totals = {}
        for key in ("records_in", "records_out", "bytes_in", "bytes_out"):
            per_topic = getattr(counters, key)
            totals[key] = sum(n for t, n in list(per_topic.items()) if ctx.topic_visible(t))
        return json_response({"time": time.time(), **totals})

    async def cluster_page(request: Request) -> Response:
        return await cluster.cluster(base.for_request(request), request)

    async def action(request: Request) -> Response:
        return await actions.run_action(base.for_request(request), request)

    get_routes: dict[str, Handler] = {
        "/": static,
        "/static/*": static,
        "/api/cluster": cluster_page,
        "/api/brokers": as_caller(cluster.brokers),
        "/api/brokers/*": as_caller(broker_page),
        "/api/topics": as_caller(topics.list_topics),
        "/api/topics/*": as_caller(topic),
        "/api/groups": as_caller(groups.list_groups),
        "/api/groups/*": as_caller(
            lambda ctx, r: groups.describe_group(ctx, r.path.removeprefix("/api/groups/"), r)
        ),
        "/api/share-groups": as_caller(share_groups.list_share_groups),
        "/api/subjects": as_caller(subjects.list_subjects),
        "/api/subjects/*": as_caller(subjects.subject_page),
        "/api/acls": as_caller(security_views.acls),
        "/api/users": as_caller(security_views.users),
        "/api/quotas": as_caller(security_views.quotas),
        "/api/rates": as_caller(rates),
        "/api/*": lambda r: _no_api(r.path),
    }
    post_routes: dict[str, Handler] = {"/api/actions/*": action}
    if login is not None:
        login_get, login_post = login.routes()
        get_routes.update(login_get)
        post_routes.update(login_post)
    else:
        get_routes["/api/login"] = _no_login
        get_routes["/api/whoami"] = _no_login
    return HttpEndpoint("console", get_routes, post_routes, json_errors=True, security=security)


def _no_login(_: Request) -> Response:
    """A console without login (no authorizer, no SASL-only listeners): open."""
    return json_response({"login": False, "mechanisms": [], "token": False, "principal": None})


def _no_api(path: str) -> Response:
    raise HttpError(404, f"no such API: {path}")
