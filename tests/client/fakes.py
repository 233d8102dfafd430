"""Socket-free doubles: a fake broker socket that trickles bytes, a selector, a clock.

``FakeBrokerSocket`` decodes the client's requests with samsa.protocol and
answers them with a handler per API, delivering its reply one byte per
``recv`` and accepting one byte per ``send`` -- the worst case for framing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from samsa.protocol.api import decode_request, encode_response
from samsa.protocol.messages import APIS

Handler = Callable[[int, dict[str, Any]], dict[str, Any] | None]


class ManualClock:
    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


class FakeBrokerSocket:
    def __init__(self, handlers: dict[int, Handler], chunk: int = 1) -> None:
        self.handlers = handlers
        self.chunk = chunk
        self._in = bytearray()
        self._out = bytearray()
        self.closed = False
        self.requests: list[tuple[int, int, dict[str, Any]]] = []
        self.hold = False  # when True, responses are kept back
        self.block_writes = False  # when True, the client's writes would block

    def fileno(self) -> int:
        return -1

    def send(self, data: Any) -> int:
        if self.closed:
            raise OSError("closed")
        if self.block_writes:
            raise BlockingIOError
        piece = bytes(data[: self.chunk])
        self._in += piece
        self._process()
        return len(piece)

    def sendmsg(self, buffers: list[Any]) -> int:
        return self.send(buffers[0])  # a short write: at most one chunk of the first part

    def _process(self) -> None:
        while len(self._in) >= 4:
            size = int.from_bytes(self._in[:4], "big")
            if len(self._in) < 4 + size:
                return
            frame = bytes(self._in[4 : 4 + size])
            del self._in[: 4 + size]
            header, body = decode_request(memoryview(frame))
            self.requests.append((header.api_key, header.api_version, body))
            reply = self.handlers[header.api_key](header.api_version, body)
            if reply is not None:
                chunks = encode_response(
                    header.api_key, header.api_version, header.correlation_id, reply
                )
                self._out += b"".join(bytes(c) for c in chunks)

    def recv(self, n: int) -> bytes:
        if self.hold or not self._out:
            if self.closed:
                return b""
            raise BlockingIOError
        piece = bytes(self._out[: min(n, self.chunk)])
        del self._out[: len(piece)]
        return piece

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        piece = self.recv(nbytes or len(buffer))
        buffer[: len(piece)] = piece
        return len(piece)

    def close(self) -> None:
        self.closed = True


class FakeSelector:
    """Reports every registered socket readable and writable on each select."""

    def __init__(self) -> None:
        self.socks: dict[int, Any] = {}
        self.wakeups = 0

    def register(self, node_id: int, sock: object, want_write: bool) -> None:
        self.socks[node_id] = sock

    def unregister(self, node_id: int) -> None:
        self.socks.pop(node_id, None)

    def select(self, timeout_ms: float) -> list[tuple[int, bool, bool]]:
        return [(n, True, True) for n in list(self.socks)]

    def wakeup(self) -> None:
        self.wakeups += 1

    def close(self) -> None:
        self.socks.clear()


def api_versions_handler(version: int, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "error_code": 0,
        "api_keys": [
            {"api_key": k, "min_version": a.valid[0], "max_version": a.valid[1]}
            for k, a in APIS.items()
        ],
        "throttle_time_ms": 0,
    }


def metadata_handler(partitions: int = 2, node_id: int = 1, nodes: int = 1) -> Handler:
    """Metadata of a cluster of ``nodes`` brokers (ids from ``node_id``, ports from 9092);
    partition p is led by the ``p % nodes``-th of them."""

    def leader(p: int) -> int:
        return node_id + p % nodes

    def handle(version: int, body: dict[str, Any]) -> dict[str, Any]:
        topics = [t["name"] for t in body["topics"] or []]
        return {
            "throttle_time_ms": 0,
            "brokers": [
                {"node_id": node_id + i, "host": "fake", "port": 9092 + i, "rack": None}
                for i in range(nodes)
            ],
            "cluster_id": "fake",
            "controller_id": node_id,
            "topics": [
                {
                    "error_code": 0,
                    "name": t,
                    "topic_id": b"\x00" * 16,
                    "is_internal": False,
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition_index": p,
                            "leader_id": leader(p),
                            "leader_epoch": 0,
                            "replica_nodes": [leader(p)],
                            "isr_nodes": [leader(p)],
                            "offline_replicas": [],
                        }
                        for p in range(partitions)
                    ],
                    "topic_authorized_operations": 0,
                }
                for t in topics
            ],
        }

    return handle


def produce_reply(
    body: dict[str, Any], code_for: Callable[[str, int], int], offsets: dict[Any, int]
) -> dict[str, Any]:
    """Answer a Produce request; idempotent batches get Kafka's sequence checks."""
    responses = []
    for t in body["topic_data"]:
        parts = []
        for p in t["partition_data"]:
            tp = (t["name"], p["index"])
            code = code_for(*tp)
            records = bytes(p["records"])
            count = int.from_bytes(records[57:61], "big")
            pid = int.from_bytes(records[43:51], "big", signed=True)
            seq = int.from_bytes(records[53:57], "big", signed=True)
            base = offsets.get(tp, 0)
            if code == 0 and pid >= 0:
                expected = offsets.get(("seq", tp), 0)
                if seq != expected:
                    code = 46 if seq < expected else 45
                else:
                    offsets[("seq", tp)] = seq + count
            if code == 0:
                offsets[tp] = base + count
            parts.append(
                {
                    "index": p["index"],
                    "error_code": code,
                    "base_offset": base if code == 0 else -1,
                    "log_append_time_ms": -1,
                    "log_start_offset": 0,
                    "record_errors": [],
                    "error_message": None,
                }
            )
        responses.append({"name": t["name"], "partition_responses": parts})
    return {"responses": responses, "throttle_time_ms": 0}
