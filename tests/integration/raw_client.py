"""A bare socket speaking the Kafka protocol through Samsa's codec, for tests
that send exactly the request (version, fields) a real client would not."""

from __future__ import annotations

import socket
import struct

from samsa.protocol.api import decode_response, encode_request


class RawClient:
    """A bare socket speaking the Kafka protocol through Samsa's codec."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.correlation = 0

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes:
        size = struct.unpack(">i", self._read(4))[0]
        return self._read(size)

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed by broker")
            out += chunk
        return out

    def call(self, api_key: int, version: int, body: dict) -> dict:
        self.correlation += 1
        self.send_raw(encode_request(api_key, version, self.correlation, "raw", body))
        corr, response = decode_response(api_key, version, memoryview(self.read_frame()))
        assert corr == self.correlation
        return response

    def is_closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()
