"""Wire primitives shared by the compiled codecs and the record-batch format.

Varints follow protobuf (base-128, little-endian groups); Kafka's signed varints
are zig-zag encoded.  All readers take ``(buf, pos)`` and return ``(value, pos)``
so that they compose without allocating reader objects.
"""

from __future__ import annotations

import struct

from samsa.errors import DecodeError

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT16 = struct.Struct(">H")
UINT32 = struct.Struct(">I")
FLOAT64 = struct.Struct(">d")


def read_uvarint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Read an unsigned varint (at most 5 bytes for 32-bit, 10 for 64-bit)."""
    result = 0
    shift = 0
    try:
        while True:
            byte = buf[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, pos
            shift += 7
            if shift > 63:
                raise DecodeError("varint is too long")
    except IndexError:
        raise DecodeError("truncated varint") from None


def read_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Read a zig-zag encoded signed varint/varlong."""
    value, pos = read_uvarint(buf, pos)
    return (value >> 1) ^ -(value & 1), pos


def uvarint_bytes(value: int) -> bytes:
    """Encode an unsigned varint."""
    if value < 0x80:
        if value < 0:
            raise ValueError("unsigned varint cannot be negative")
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_bytes(value: int) -> bytes:
    """Encode a zig-zag signed varint (64-bit range)."""
    return uvarint_bytes((value << 1) ^ (value >> 63))


_SMALL = [bytes([i]) for i in range(0x80)]
