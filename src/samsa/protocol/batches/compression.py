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

A broker decompresses what any client sent, and a megabyte of compressed
zeros can stand for gigabytes, so ``decompress`` takes a ``limit``: each codec
then inflates incrementally into bounded pieces (zlib's and lz4's
``max_length``, zstd's stream reader after a walk of the frame headers,
snappy's declared block lengths read before a block is inflated) and raises
``DecompressedTooLarge`` (INVALID_RECORD) as soon as the output would pass
the limit, never holding more than ``limit`` bytes.  Without a limit (the
consumer, which asked for the bytes) each codec inflates in one call.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from enum import IntEnum

import cramjam
import lz4.frame
import zstandard

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.zstd_frames import check_zstd_frames

__all__ = ["Compression", "DecompressedTooLarge", "compress", "decompress"]


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

# The largest piece a bounded decompression asks a codec for at once: a
# codec may reserve the whole piece before it knows how much it will fill.
_BOUNDED_PIECE = 1 << 20


class DecompressedTooLarge(KafkaError):
    """INVALID_RECORD: the records would decompress to more than ``limit`` bytes.

    The caller that knows which setting set the limit words the client's message
    (``protocol.batches.decompression_limit``)."""

    def __init__(self, codec: Compression | int, limit: int) -> None:
        super().__init__(
            ErrorCode.INVALID_RECORD,
            f"{Compression(codec).name} records decompress to more than {limit} bytes",
        )
        self.limit = limit


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


def decompress(
    codec: Compression | int,
    data: bytes | bytearray | memoryview,
    *,
    limit: int | None = None,
) -> bytes:
    """Decompress a records blob written by any Kafka client with *codec*.

    With ``limit`` the output is never more than ``limit`` bytes: input that
    inflates to more raises ``DecompressedTooLarge`` before the rest is made."""
    try:
        if codec == Compression.NONE:
            if limit is not None and len(data) > limit:
                raise DecompressedTooLarge(codec, limit)
            return bytes(data)
        if limit is not None:
            return _bounded(codec, data, limit)
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


def _bounded(codec: Compression | int, data: bytes | bytearray | memoryview, limit: int) -> bytes:
    if codec == Compression.GZIP:
        return _gzip_bounded(data, limit)
    if codec == Compression.SNAPPY:
        return _snappy_bounded(data, limit)
    if codec == Compression.LZ4:
        return _lz4_bounded(data, limit)
    if codec == Compression.ZSTD:
        return _zstd_bounded(data, limit)
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
    return b"".join(bytes(cramjam.snappy.decompress_raw(b)) for b in _xerial_blocks(view))


def _xerial_blocks(view: memoryview) -> Iterator[memoryview]:
    """The raw snappy blocks of a xerial stream (its 16-byte header checked by the caller)."""
    # Version/compat (bytes 8..16) are ignored on purpose: some producers write
    # them little-endian, and there has only ever been one xerial block layout.
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
        yield view[pos : pos + size]
        pos += size


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


# -- bounded decompression: at most ``limit`` bytes out, in pieces -----------


class _Output:
    """The pieces made so far; refuses the one that takes the total past the limit."""

    __slots__ = ("codec", "limit", "pieces", "total")

    def __init__(self, codec: Compression, limit: int) -> None:
        self.codec = codec
        self.limit = limit
        self.pieces: list[bytes] = []
        self.total = 0

    def room(self) -> int:
        """How much to ask for next: one byte past the limit tells that it was passed."""
        return min(self.limit - self.total + 1, _BOUNDED_PIECE)

    def add(self, piece: bytes) -> None:
        self.total += len(piece)
        if self.total > self.limit:
            raise DecompressedTooLarge(self.codec, self.limit)
        self.pieces.append(piece)

    def promise(self, size: int) -> None:
        """Refuse up front what a block declares it will inflate to."""
        if self.total + size > self.limit:
            raise DecompressedTooLarge(self.codec, self.limit)

    def joined(self) -> bytes:
        return b"".join(self.pieces)


def _gzip_bounded(data: bytes | bytearray | memoryview, limit: int) -> bytes:
    out = _Output(Compression.GZIP, limit)
    rest = bytes(data)
    while True:
        inflater = zlib.decompressobj(_GZIP_OR_ZLIB_WBITS)
        pending = rest
        while not inflater.eof:
            piece = inflater.decompress(pending, out.room())
            out.add(piece)
            pending = inflater.unconsumed_tail
            if not piece and not pending and not inflater.eof:
                raise ValueError("truncated gzip stream")
        rest = inflater.unused_data
        if not rest.strip(b"\x00"):
            return out.joined()


def _snappy_bounded(data: bytes | bytearray | memoryview, limit: int) -> bytes:
    """A raw snappy block starts with the length it inflates to: checked before inflating."""
    out = _Output(Compression.SNAPPY, limit)
    view = memoryview(data)
    if len(view) < 16 or view[:8] != _XERIAL_MAGIC:
        out.promise(_snappy_length(view))
        return bytes(cramjam.snappy.decompress_raw(view))
    for block in _xerial_blocks(view):
        out.promise(_snappy_length(block))
        out.add(bytes(cramjam.snappy.decompress_raw(block)))
    return out.joined()


def _snappy_length(block: memoryview) -> int:
    """The uncompressed length a raw snappy block declares (a little-endian varint)."""
    length = 0
    for shift, byte in zip(range(0, 35, 7), block, strict=False):
        length |= (byte & 0x7F) << shift
        if byte < 0x80:
            return length
    raise ValueError("bad snappy block length")


def _lz4_bounded(data: bytes | bytearray | memoryview, limit: int) -> bytes:
    out = _Output(Compression.LZ4, limit)
    rest = bytes(data)
    while rest:
        decompressor = lz4.frame.LZ4FrameDecompressor()
        pending = rest
        while not decompressor.eof:
            piece = decompressor.decompress(pending, max_length=out.room())
            pending = b""  # the decompressor keeps what it has not used yet
            out.add(piece)
            if not piece and decompressor.needs_input and not decompressor.eof:
                raise ValueError("truncated lz4 frame")
        rest = decompressor.unused_data
    return out.joined()


def _zstd_bounded(data: bytes | bytearray | memoryview, limit: int) -> bytes:
    # The reader stops quietly at a cut frame: the walk refuses those first.
    check_zstd_frames(data)
    out = _Output(Compression.ZSTD, limit)
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    while piece := reader.read(out.room()):
        out.add(piece)
    return out.joined()
