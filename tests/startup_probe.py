"""A client that connects the instant a starting node's port accepts.

Health checks, ``wait-for-it`` scripts and librdkafka itself connect as soon as
the port opens, while the node is still starting; these helpers do the same
and then speak as a client's first requests do (ApiVersions, then Metadata,
pipelined on one connection), reading each answer or reporting the hang-up.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from samsa.protocol.api import decode_response, encode_request
from samsa.testing.cluster import wait_until

API_VERSIONS, PRODUCE, FETCH, METADATA = 18, 0, 1, 3
CLIENT_APIS = frozenset({PRODUCE, FETCH, METADATA})


def connect_when_accepting(port: int, timeout: float = 60.0) -> socket.socket:
    """A connection made as soon as something accepts on ``port``."""

    def attempt() -> socket.socket:
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)

    return wait_until(attempt, timeout, f"port {port} to accept", errors=(OSError,))


def send_first_requests(sock: socket.socket) -> None:
    """ApiVersions v3 then Metadata v12 (every topic), without waiting in between."""
    hello = {"client_software_name": "startup-probe", "client_software_version": "1"}
    every_topic = {
        "topics": None,
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False,
    }
    sock.sendall(
        encode_request(API_VERSIONS, 3, 1, "startup-probe", hello)
        + encode_request(METADATA, 12, 2, "startup-probe", every_topic)
    )


def read_answer(sock: socket.socket, api_key: int, version: int) -> tuple[int, Any]:
    """(correlation id, body) of the next response; ConnectionError if the node hung up."""
    size = struct.unpack(">i", _read(sock, 4))[0]
    return decode_response(api_key, version, memoryview(_read(sock, size)))


def read_first_answers(sock: socket.socket) -> tuple[frozenset[int], Any]:
    """The API keys ApiVersions listed, and the Metadata answer, checked in order."""
    correlation, versions = read_answer(sock, API_VERSIONS, 3)
    assert correlation == 1 and versions["error_code"] == 0, versions
    correlation, metadata = read_answer(sock, METADATA, 12)
    assert correlation == 2, metadata
    return frozenset(entry["api_key"] for entry in versions["api_keys"]), metadata


def _read(sock: socket.socket, n: int) -> bytes:
    data = sock.recv(n, socket.MSG_WAITALL)
    if len(data) < n:
        raise ConnectionError("the node closed the connection")
    return data
