"""netem in user space: delay, jitter, loss and duplication of a host's packets.

This kernel has no ``netem`` qdisc, but it has NFQUEUE: an iptables rule hands
each packet a host sends to a queue, and a program holding that queue decides
when (and whether) the kernel lets it go.  This program is that holder, run
inside a host's namespace (``python -m tests.netfaults.packet_delay``).  It
speaks nfnetlink's queue protocol over a plain netlink socket, so it needs no
library, and releases each packet after ``delay`` +/- ``jitter`` ms (so, as
with netem's jitter, packets overtake one another), drops ``loss`` % of them
and sends ``duplicate`` % twice (the copy is re-sent through a raw socket,
marked so it is not queued again, with its TCP checksum recomputed: the
original's is left to the NIC, which a veth never fills in).

It prints ``ready`` once the queue is bound, and on SIGTERM/SIGINT releases
what it holds and prints its counts as ``delayed=N dropped=N duplicated=N``.
The queue is bound fail-open (and the rule uses ``--queue-bypass``), so a
packet is never stuck when this program is gone or its queue is full.
"""

from __future__ import annotations

import argparse
import errno
import heapq
import random
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET = 0
NFQNL_MSG_VERDICT = 1
NFQNL_MSG_CONFIG = 2
NFQA_CFG_CMD = 1
NFQA_CFG_PARAMS = 2
NFQA_CFG_QUEUE_MAXLEN = 3
NFQA_CFG_MASK = 4
NFQA_CFG_FLAGS = 5
NFQA_CFG_F_FAIL_OPEN = 1
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_PACKET = 2
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NFQA_PAYLOAD = 10
NF_DROP = 0
NF_ACCEPT = 1
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
SO_MARK = 36
SO_RCVBUFFORCE = 33
COPY_MARK = 0x5A3
"""The mark on re-sent copies; the queue rule skips packets carrying it."""


def _attr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def _message(kind: int, queue: int, attrs: bytes, seq: int = 0) -> bytes:
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    msg_type = (NFNL_SUBSYS_QUEUE << 8) | kind
    return struct.pack("=IHHII", 16 + len(body), msg_type, NLM_F_REQUEST, seq, 0) + body


def _attrs(data: bytes, offset: int) -> dict[int, bytes]:
    found = {}
    while offset + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, offset)
        if length < 4:
            break
        found[kind & 0x7FFF] = data[offset + 4 : offset + length]
        offset += (length + 3) & ~3
    return found


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def with_tcp_checksum(packet: bytes) -> bytes:
    """The IPv4 packet with its TCP checksum computed (left to offload on send)."""
    header = (packet[0] & 0x0F) * 4
    if packet[9] != socket.IPPROTO_TCP or len(packet) < header + 20:
        return packet
    segment = bytearray(packet[header:])
    segment[16:18] = b"\0\0"
    pseudo = packet[12:20] + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(segment))
    struct.pack_into("!H", segment, 16, _checksum(pseudo + bytes(segment)))
    return packet[:header] + bytes(segment)


class PacketDelay:
    """Holds the queue's packets until their release time."""

    def __init__(
        self, queue: int, delay_ms: float, jitter_ms: float, loss: float, duplicate: float
    ) -> None:
        self.queue, self.delay, self.jitter = queue, delay_ms / 1000, jitter_ms / 1000
        self.loss, self.duplicate = loss / 100, duplicate / 100
        self.rng = random.Random()
        self.held: list[tuple[float, int, int]] = []  # (release time, packet id, verdict)
        self.counts = {"delayed": 0, "dropped": 0, "duplicated": 0}
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        self.sock.bind((0, 0))
        self.raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.raw.setsockopt(socket.SOL_SOCKET, SO_MARK, COPY_MARK)
        self._seq = 0

    def bind(self) -> None:
        cmd = struct.pack("=BxH", NFQNL_CFG_CMD_BIND, socket.htons(socket.AF_INET))
        params = struct.pack("!IB", 0xFFFF, NFQNL_COPY_PACKET)
        flags = struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)
        self._config(_attr(NFQA_CFG_CMD, cmd))
        self._config(
            _attr(NFQA_CFG_PARAMS, params)
            + _attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", 65536))
            + _attr(NFQA_CFG_MASK, flags)
            + _attr(NFQA_CFG_FLAGS, flags)
        )

    def _config(self, attrs: bytes) -> None:
        self._seq += 1
        self.sock.send(_message(NFQNL_MSG_CONFIG, self.queue, attrs, self._seq))

    def _verdict(self, packet_id: int, verdict: int) -> None:
        hdr = _attr(NFQA_VERDICT_HDR, struct.pack("!II", verdict, packet_id))
        self.sock.send(_message(NFQNL_MSG_VERDICT, self.queue, hdr))

    def _on_packet(self, data: bytes, offset: int, now: float) -> None:
        attrs = _attrs(data, offset)
        header = attrs.get(NFQA_PACKET_HDR)
        if header is None:
            return
        (packet_id,) = struct.unpack_from("!I", header)
        if self.rng.random() < self.loss:
            self.counts["dropped"] += 1
            self._verdict(packet_id, NF_DROP)
            return
        payload = attrs.get(NFQA_PAYLOAD)
        if payload and self.rng.random() < self.duplicate:
            try:
                self.raw.sendto(with_tcp_checksum(payload), (socket.inet_ntoa(payload[16:20]), 0))
                self.counts["duplicated"] += 1
            except OSError:
                pass  # larger than the link's MTU (an offloaded segment): no copy
        delay = max(0.0, self.delay + self.rng.uniform(-self.jitter, self.jitter))
        heapq.heappush(self.held, (now + delay, packet_id, NF_ACCEPT))
        self.counts["delayed"] += 1

    def _receive(self) -> None:
        try:
            data = self.sock.recv(1 << 17)
        except OSError as exc:
            if exc.errno == errno.ENOBUFS:  # the kernel let those go (fail-open)
                return
            raise
        now = time.monotonic()
        offset = 0
        while offset + 16 <= len(data):
            length, msg_type = struct.unpack_from("=IH", data, offset)
            if length < 16:
                break
            if msg_type == NLMSG_ERROR:
                (code,) = struct.unpack_from("=i", data, offset + 16)
                if code:
                    raise OSError(-code, f"nfqueue: {errno.errorcode.get(-code, code)}")
            elif msg_type == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                self._on_packet(data[: offset + length], offset + 20, now)
            offset += (length + 3) & ~3

    def _release(self, until: float) -> None:
        while self.held and self.held[0][0] <= until:
            _, packet_id, verdict = heapq.heappop(self.held)
            self._verdict(packet_id, verdict)

    def run(self, stop: list[bool]) -> None:
        while not stop[0]:
            timeout = max(0.0, self.held[0][0] - time.monotonic()) if self.held else 0.5
            readable, _, _ = select.select([self.sock], [], [], timeout)
            if readable:
                self._receive()
            self._release(time.monotonic())
        self._release(float("inf"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queue", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    parser.add_argument("--loss", type=float, default=0.0, help="percent dropped")
    parser.add_argument("--duplicate", type=float, default=0.0, help="percent sent twice")
    args = parser.parse_args()
    delay = PacketDelay(args.queue, args.delay_ms, args.jitter_ms, args.loss, args.duplicate)
    delay.bind()
    stop = [False]

    def on_signal(signum: int, frame: object) -> None:
        stop[0] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print("ready", flush=True)
    delay.run(stop)
    print(" ".join(f"{k}={v}" for k, v in delay.counts.items()), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
