"""Record-batch compression codecs with the framing Kafka clients use.

A v2 record batch compresses all of its records as one blob; the codec id lives
in the low three bits of the batch attributes.  Each codec must produce the
exact *framing* the Java client reads and accept what every real client writes:

* gzip: a gzip member stream (``java.util.zip.GZIPOutputStream``).  Readers
  accept concatenated members, as ``GZIPInputStream`` does.
* snappy: xerial ``SnappyOutputStream`` framing on output (16-byte header
  ``\\x82SNAPPY\\x00`` + version 1 + compat 1, then ``[int32 length][raw block]``
  chunks of at most 32 KiB input).  Input may be xerial-framed (Java,
  librdkafka) or one raw snappy block (some other clients).
* lz4: the standard LZ4 *frame* format with independent 64 KiB blocks and no
  content size, which is what the Java ``Lz4BlockOutputStream`` writes and
  the only block layout its reader can decode.
* zstd: standard zstd frames; input frames may lack the content size, so
  decompression streams across frames instead of trusting the header.

Corrupt compressed input raises ``KafkaError(CORRUPT_MESSAGE)``, which is the
code a broker returns for a batch it cannot decompress; an unknown codec id
raises ``KafkaError(UNSUPPORTED_COMPRESSION_TYPE)``.  All codecs are C/Rust
backed (zlib, cramjam, lz4, zstandard) because they sit on the producer's and
consumer's hot paths.
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum

import cramjam
import lz4.frame
import zstandard

from samsa.errors import ErrorCode, KafkaError

__all__ = ["Compression", "compress", "decompress"]


class Compression(IntEnum):
    """Codec ids as stored in bits 0-2 of the batch attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


# Java's GZIPOutputStream uses Deflater.DEFAULT_COMPRESSION, i.e. level 6.
_GZIP_LEVEL = 6
_GZIP_WBITS = 31  # 16 + MAX_WBITS: write a gzip header and trailer
_GZIP_OR_ZLIB_WBITS = 47  # 32 + MAX_WBITS: auto-detect gzip or zlib header

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK_SIZE = 32 * 1024
_INT32 = struct.Struct(">i")

_ZSTD_LEVEL = 3  # zstd's own default, also Kafka's compression.zstd.level default


def compress(codec: Compression | int, data: bytes | bytearray | memoryview) -> bytes:
    """Compress a records blob with *codec*; ``NONE`` returns the bytes unchanged."""
    if codec == Compression.NONE:
        return bytes(data)
    if codec == Compression.GZIP:
        compressor = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
        return compressor.compress(data) + compressor.flush()
    if codec == Compression.SNAPPY:
        return _xerial_snappy_compress(data)
    if codec == Compression.LZ4:
        return lz4.frame.compress(
            data,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            store_size=False,
        )
    if codec == Compression.ZSTD:
        return zstandard.ZstdCompressor(level=_ZSTD_LEVEL).compress(data)
    raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"unknown compression codec {codec}")


def decompress(codec: Compression | int, data: bytes | bytearray | memoryview) -> bytes:
    """Decompress a records blob written by any Kafka client with *codec*."""
    try:
        if codec == Compression.NONE:
            return bytes(data)
        if codec == Compression.GZIP:
            return _gzip_decompress(data)
        if codec == Compression.SNAPPY:
            return _snappy_decompress(data)
        if codec == Compression.LZ4:
            return _lz4_decompress(data)
        if codec == Compression.ZSTD:
            return _zstd_decompress(data)
    except KafkaError:
        raise
    except Exception as exc:  # each C library raises its own error types
        raise KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            f"cannot decompress {Compression(codec).name} records: {exc}",
        ) from exc
    raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"unknown compression codec {codec}")


def _gzip_decompress(data: bytes | bytearray | memoryview) -> bytes:
    """Inflate every concatenated gzip member, failing on a truncated one."""
    out: list[bytes] = []
    rest = bytes(data)
    while True:
        inflater = zlib.decompressobj(_GZIP_OR_ZLIB_WBITS)
        out.append(inflater.decompress(rest))
        if not inflater.eof:
            raise ValueError("truncated gzip stream")
        rest = inflater.unused_data
        if not rest.strip(b"\x00"):  # tolerate trailing zero padding like GZIPInputStream
            return b"".join(out)


def _xerial_snappy_compress(data: bytes | bytearray | memoryview) -> bytes:
    view = memoryview(data)
    parts = [_XERIAL_HEADER]
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE]))
        parts.append(_INT32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_decompress(data: bytes | bytearray | memoryview) -> bytes:
    """Accept xerial-framed streams and bare raw snappy blocks."""
    view = memoryview(data)
    if len(view) < 16 or view[:8] != _XERIAL_MAGIC:
        return bytes(cramjam.snappy.decompress_raw(view))
    # Version/compat (bytes 8..16) are ignored on purpose: some producers write
    # them little-endian, and there has only ever been one xerial block layout.
    out: list[bytes] = []
    pos = 16
    end = len(view)
    while pos < end:
        if view[pos : pos + 8] == _XERIAL_MAGIC:  # concatenated streams
            pos += 16
            continue
        if pos + 4 > end:
            raise ValueError("truncated xerial snappy block length")
        (size,) = _INT32.unpack_from(view, pos)
        pos += 4
        if size < 0 or pos + size > end:
            raise ValueError("truncated xerial snappy block")
        out.append(bytes(cramjam.snappy.decompress_raw(view[pos : pos + size])))
        pos += size
    return b"".join(out)


def _lz4_decompress(data: bytes | bytearray | memoryview) -> bytes:
    out: list[bytes] = []
    rest = bytes(data)
    while rest:
        decompressor = lz4.frame.LZ4FrameDecompressor()
        out.append(decompressor.decompress(rest))
        if not decompressor.eof:
            raise ValueError("truncated lz4 frame")
        rest = decompressor.unused_data
    return b"".join(out)


def _zstd_decompress(data: bytes | bytearray | memoryview) -> bytes:
    # A streaming decompressor per frame, so frames without a content-size
    # field work and a truncated last frame is detected (``eof`` stays False).
    out: list[bytes] = []
    rest = bytes(data)
    while rest:
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        out.append(decompressor.decompress(rest))
        if not decompressor.eof:
            raise ValueError("truncated zstd frame")
        rest = decompressor.unused_data
    return b"".join(out)
