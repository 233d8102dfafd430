"""Which broker leads each partition of one topic, as one broker answers, cheaply.

A bench timing a failover asks many times a second.  Decoding the whole
Metadata answer (380 KB for 10,000 partitions) into dicts took 63 ms of CPU
with Samsa's codec and 86 ms through librdkafka's Python objects; asked at
wait_until's pace, the bench took one of the machine's two cores from the
brokers it was timing.  This reads a Metadata v12 answer's leader ids in
place and skips the rest, over one connection kept open, and ``wait_led_by_none``
asks every ``PACE_S``: the survivor builds each answer afresh for every new
image (every step of 200 leadership changes), ~20 ms of its loop for 10,000
partitions, and a client retrying a lost leader waits ``retry.backoff.ms``
(100 ms) between its Metadata requests too.
"""

from __future__ import annotations

import socket
import struct
import time

from samsa.protocol.api import encode_request, skip_tagged_fields
from samsa.protocol.primitives import read_uvarint

PACE_S = 0.1
"""Between two questions; a timing is up to this much late."""

METADATA = 3
VERSION = 12
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class LeaderProbe:
    """Leader ids of ``topic``'s partitions, as the broker at ``address`` knows them."""

    def __init__(self, address: str, topic: str) -> None:
        host, port = address.rsplit(":", 1)
        self._sock = socket.create_connection((host, int(port)), timeout=10)
        self._topic = topic
        self._correlation = 0

    def close(self) -> None:
        self._sock.close()

    def leaders(self) -> list[int]:
        self._correlation += 1
        body = {
            "topics": [{"topic_id": b"\x00" * 16, "name": self._topic}],
            "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False,
        }
        self._sock.sendall(encode_request(METADATA, VERSION, self._correlation, "probe", body))
        [size] = _I32.unpack(self._read(4))
        frame = self._read(size)
        [correlation] = _I32.unpack_from(frame, 0)
        if correlation != self._correlation:
            raise ConnectionError(f"answer {correlation} to request {self._correlation}")
        return _leader_ids(frame, 5)  # past the correlation id and the header's tags

    def led_by(self, broker: int) -> int:
        return self.leaders().count(broker)

    def wait_led_by_none(self, broker: int, timeout: float) -> None:
        """Until no partition names ``broker`` as its leader, asked every PACE_S."""
        deadline = time.monotonic() + timeout
        while self.led_by(broker):
            if time.monotonic() >= deadline:
                raise TimeoutError(f"broker {broker} still leads after {timeout} s")
            time.sleep(PACE_S)

    def _read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self._sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed by the broker")
            out += chunk
        return bytes(out)


def _leader_ids(buf: bytes, pos: int) -> list[int]:
    """The leader id of every partition of the one topic in a Metadata v12 body."""
    pos += 4  # throttle_time_ms
    brokers, pos = read_uvarint(buf, pos)
    for _ in range(brokers - 1):
        pos += 4  # node_id
        pos = _skip_string(buf, pos)  # host
        pos += 4  # port
        pos = _skip_string(buf, pos)  # rack
        pos = skip_tagged_fields(memoryview(buf), pos)
    pos = _skip_string(buf, pos)  # cluster_id
    pos += 4  # controller_id
    topics, pos = read_uvarint(buf, pos)
    if topics != 2:
        raise ValueError(f"expected one topic, got {topics - 1}")
    [error] = _I16.unpack_from(buf, pos)
    if error:
        raise ValueError(f"topic error {error}")
    pos = _skip_string(buf, pos + 2)  # name
    pos += 16 + 1  # topic_id, is_internal
    partitions, pos = read_uvarint(buf, pos)
    leaders = []
    leader_at = _I32.unpack_from
    for _ in range(partitions - 1):
        leaders.append(leader_at(buf, pos + 6)[0])  # after error_code, partition_index
        pos += 2 + 4 + 4 + 4  # error_code, partition_index, leader_id, leader_epoch
        for _ in range(3):  # replica_nodes, isr_nodes, offline_replicas
            count = buf[pos]
            if count < 0x80:  # under 127 replicas: a one-byte length
                pos += 1 + 4 * max(count - 1, 0)
            else:
                count, pos = read_uvarint(buf, pos)
                pos += 4 * (count - 1)
        pos = pos + 1 if buf[pos] == 0 else skip_tagged_fields(memoryview(buf), pos)
    return leaders


def _skip_string(buf: bytes, pos: int) -> int:
    length, pos = read_uvarint(buf, pos)
    return pos + max(length - 1, 0)
