"""The broker's HTTP endpoints: ``/metrics`` and the web console, when their
listen addresses are set, each with the TLS, Host names and login its
settings give (``http_security``).

The console gets the broker through ``ConsolePort`` (``samsa.console`` never
imports the server); its Kafka requests are served by the handlers of the
listener its users log in on (or the first client listener), behind the
same authorization checks as that listener's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.config import parse_host_port
from samsa.http.endpoint import HttpEndpoint
from samsa.server.bind_failure import explain_bind_failure
from samsa.server.http_security import endpoint_security, login_listener

if TYPE_CHECKING:
    from samsa.node_settings import NodeSettings
    from samsa.server.broker import Broker
    from samsa.server.broker_view import BrokerView
    from samsa.server.metrics import BrokerMetrics


async def bind_http_endpoints(broker: Broker, metrics: BrokerMetrics) -> list[HttpEndpoint]:
    """Build and bind each endpoint whose address is set (they answer once
    ``serve`` is called); ConfigError for a busy port or a bad setting."""
    from samsa.server.broker_view import BrokerView

    view = BrokerView(broker)
    config = broker.config
    settings = broker.node.settings
    endpoints = []
    for key, build in (("metrics.listen", _metrics), ("console.listen", _console)):
        address = str(config[key])
        if not address:
            continue
        endpoint = build(broker, settings, view, metrics, address)
        host, port = parse_host_port(address)
        with explain_bind_failure(f"the {endpoint.name} endpoint ({key})", host, port):
            await endpoint.bind(host, port)
        endpoints.append(endpoint)
    return endpoints


def _metrics(
    broker: Broker, settings: NodeSettings, view: BrokerView, metrics: BrokerMetrics, address: str
) -> HttpEndpoint:
    from samsa.server.observability import metrics_endpoint

    return metrics_endpoint(view, metrics, endpoint_security(broker, settings, "metrics", address))


def _console(
    broker: Broker, settings: NodeSettings, view: BrokerView, metrics: BrokerMetrics, address: str
) -> HttpEndpoint:
    from samsa.console import console_endpoint
    from samsa.http.login import SessionLogin
    from samsa.server.console_port import ConsolePort

    security = endpoint_security(broker, settings, "console", address)
    listener = login_listener(broker.config, settings, "console.login.listener")
    port = ConsolePort(broker, view, metrics, listener or broker.node.client_listeners()[0].name)
    login = security.gate if isinstance(security.gate, SessionLogin) else None
    return console_endpoint(
        port,
        allow_actions=bool(broker.config["console.allow.actions"]),
        security=security,
        login=login,
    )
