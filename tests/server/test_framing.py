"""FrameReader: whole frames out of any split of the byte stream, large ones in their own buffer."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.server.connections.framing import FrameReader, FrameTooLarge


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def feed(reader: FrameReader, data: bytes, pieces: list[int]) -> list[bytes | bytearray]:
    """Deliver ``data`` as recv_into would: never more than the buffer offered."""
    out: list[bytes | bytearray] = []
    pos = 0
    i = 0
    while pos < len(data):
        buf = reader.buffer()
        assert len(buf) > 0, "the reader must always offer room"
        want = pieces[i % len(pieces)] if pieces else len(data)
        i += 1
        n = min(len(buf), want, len(data) - pos)
        buf[:n] = data[pos : pos + n]
        pos += n
        out.extend(reader.received(n))
    return out


PAYLOADS = [b"", b"a", b"x" * 100, bytes(range(256)) * 400, b"y" * 70_000, b"z" * 5]


@pytest.mark.parametrize("pieces", [[], [1], [3, 7], [4096], [65_536], [100_000]])
def test_frames_survive_every_split(pieces: list[int]) -> None:
    data = b"".join(frame(p) for p in PAYLOADS)
    reader = FrameReader(1 << 20, scratch_bytes=64 * 1024)
    got = feed(reader, data, pieces)
    assert [bytes(f) for f in got] == PAYLOADS


def test_a_large_frame_is_its_own_writable_buffer() -> None:
    big = b"b" * 200_000
    reader = FrameReader(1 << 20, scratch_bytes=64 * 1024)
    [small, large] = feed(reader, frame(b"hi") + frame(big), [50_000])
    assert small == b"hi" and isinstance(small, bytes)
    assert large == big and isinstance(large, bytearray)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=3000), min_size=1, max_size=12),
    st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=8),
)
def test_any_frames_any_pieces(payloads: list[bytes], pieces: list[int]) -> None:
    reader = FrameReader(1 << 16, scratch_bytes=4096)
    data = b"".join(frame(p) for p in payloads)
    assert [bytes(f) for f in feed(reader, data, pieces)] == payloads


@pytest.mark.parametrize("size", [-1, (1 << 20) + 1])
def test_impossible_length_prefix_is_refused(size: int) -> None:
    reader = FrameReader(1 << 20)
    buf = reader.buffer()
    buf[:4] = struct.pack(">i", size)
    with pytest.raises(FrameTooLarge):
        reader.received(4)


def test_random_streams_against_a_simple_model() -> None:
    rng = random.Random(7)
    payloads = [rng.randbytes(rng.choice([0, 10, 1000, 20_000, 90_000])) for _ in range(60)]
    data = b"".join(frame(p) for p in payloads)
    reader = FrameReader(1 << 20, scratch_bytes=32 * 1024)
    pieces = [rng.randint(1, 40_000) for _ in range(50)]
    assert [bytes(f) for f in feed(reader, data, pieces)] == payloads
