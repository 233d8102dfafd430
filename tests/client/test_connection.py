"""BrokerConnection framing against sockets that move one byte at a time."""

from __future__ import annotations

import struct

import pytest

from samsa.client.network.connection import BrokerConnection, FramingError


class TrickleSocket:
    def __init__(self, incoming: bytes = b"", eof: bool = False) -> None:
        self.incoming = bytearray(incoming)
        self.sent = bytearray()
        self.eof = eof
        self.block_writes = False

    def send(self, data: bytes) -> int:
        if self.block_writes:
            raise BlockingIOError
        self.sent += bytes(data[:1])
        return 1

    def sendmsg(self, buffers: list[memoryview]) -> int:
        return self.send(buffers[0])

    def recv(self, n: int) -> bytes:
        if not self.incoming:
            if self.eof:
                return b""
            raise BlockingIOError
        b = bytes(self.incoming[:1])
        del self.incoming[:1]
        return b

    def recv_into(self, buffer: memoryview, n: int = 0) -> int:
        piece = self.recv(n or len(buffer))
        buffer[: len(piece)] = piece
        return len(piece)

    def close(self) -> None:
        pass

    def fileno(self) -> int:
        return -1


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def test_partial_writes_keep_their_place() -> None:
    sock = TrickleSocket()
    conn = BrokerConnection(1, sock)
    conn.enqueue(frame(b"hello"))
    conn.enqueue(frame(b"world!"))
    sock.block_writes = True
    assert conn.write() is False and conn.has_pending_writes
    sock.block_writes = False
    assert conn.write() is True
    assert bytes(sock.sent) == frame(b"hello") + frame(b"world!")
    assert not conn.has_pending_writes


def test_frames_are_reassembled_from_single_bytes() -> None:
    data = frame(b"abc") + frame(b"") + frame(b"x" * 300)
    sock = TrickleSocket(data)
    conn = BrokerConnection(1, sock)
    got: list[bytes] = []
    for _ in range(len(data) + 5):
        got.extend(conn.read() or [])
    assert got == [b"abc", b"", b"x" * 300]


def test_eof_returns_none_after_delivering_frames() -> None:
    sock = TrickleSocket(frame(b"ok"), eof=True)
    conn = BrokerConnection(1, sock)
    got: list[bytes] = []
    for _ in range(10):
        frames = conn.read()
        if frames is None:
            break
        got.extend(frames)
    assert got == [b"ok"]
    assert conn.read() is None


def test_negative_size_is_a_framing_error() -> None:
    conn = BrokerConnection(1, TrickleSocket(struct.pack(">i", -5)))
    with pytest.raises(FramingError):
        for _ in range(5):
            conn.read()


class ChunkSocket(TrickleSocket):
    """Hands out at most the requested size, in pieces of the given lengths."""

    def __init__(self, incoming: bytes, pieces: list[int]) -> None:
        super().__init__(incoming)
        self.pieces = pieces
        self.asked: list[int] = []

    def recv(self, n: int) -> bytes:
        if not self.incoming:
            raise BlockingIOError
        self.asked.append(n)
        take = min(n, self.pieces.pop(0) if self.pieces else n)
        b = bytes(self.incoming[:take])
        del self.incoming[:take]
        return b


@pytest.mark.parametrize(
    "pieces",
    [[], [3], [5, 100_000, 7], [300_000, 1, 1], [1] * 20 + [65_536] * 8],
    ids=["whole", "header-split", "odd", "body-then-bytes", "small-then-64k"],
)
def test_large_frames_between_small_ones_whatever_the_split(pieces: list[int]) -> None:
    big = bytes(range(256)) * 1200  # 307,200 bytes: larger than one receive chunk
    data = frame(b"a") + frame(big) + frame(b"bc") + frame(big[::-1]) + frame(b"")
    sock = ChunkSocket(data, list(pieces))
    conn = BrokerConnection(1, sock)
    got: list[bytes] = []
    for _ in range(1000):
        got.extend(conn.read() or [])
        if not sock.incoming:
            break
    assert got == [b"a", big, b"bc", big[::-1], b""]
    assert max(sock.asked) <= 307_200, "never reads past a large frame's end"


def test_large_frame_from_single_bytes() -> None:
    big = b"y" * 270_000
    data = frame(big) + frame(b"after")
    sock = TrickleSocket(data)
    conn = BrokerConnection(1, sock)
    got: list[bytes] = []
    for _ in range(len(data) + 5):
        got.extend(conn.read() or [])
    assert got == [big, b"after"]


class GatherSocket(TrickleSocket):
    """``sendmsg`` takes up to ``step`` bytes across the buffers it is given, as the kernel does."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step

    def send(self, data: bytes) -> int:
        return self.sendmsg([data])

    def sendmsg(self, buffers: list[memoryview]) -> int:
        taken = b"".join(bytes(b) for b in buffers)[: self.step]
        self.sent += taken
        return len(taken)


@pytest.mark.parametrize("step", [1, 3, 7, 100, 1 << 20])
def test_frames_queued_as_parts_go_out_whole_and_in_order(step: int) -> None:
    big = bytearray(range(256)) * 80  # a producer batch buffer, referenced not copied
    sock = GatherSocket(step)
    conn = BrokerConnection(1, sock)
    conn.enqueue_parts([b"\x00\x00\x50\x05head", memoryview(big)[:20480], b"t"])
    conn.enqueue(frame(b"next"))
    for _ in range(30000):
        if conn.write():
            break
    assert bytes(sock.sent) == b"\x00\x00\x50\x05head" + bytes(big[:20480]) + b"t" + frame(b"next")
    assert not conn.has_pending_writes
