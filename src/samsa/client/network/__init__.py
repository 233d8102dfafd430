"""Client networking: connections, selector, in-flight requests, NetworkClient."""

from samsa.client.network.in_flight import ClientRequest, ClientResponse
from samsa.client.network.network_client import NetworkClient

__all__ = ["ClientRequest", "ClientResponse", "NetworkClient"]
