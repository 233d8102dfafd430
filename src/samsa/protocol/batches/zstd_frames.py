"""Checks that bytes are whole zstd frames, from their headers alone (RFC 8878).

``zstandard``'s bounded reader (``stream_reader``, which hands out at most the
bytes asked for) treats a frame cut short as a clean end, so the bounded
decompression in ``compression`` walks the frame structure first: a frame
header, then block headers (each says its type and how many bytes follow),
the last block flagged, then the optional content checksum.  Skippable frames
are stepped over.  Nothing is decompressed here: the walk costs one header
per block (a block holds at most 128 KiB of output), and a truncated or
garbled stream is refused before any output is made.
"""

from __future__ import annotations

__all__ = ["check_zstd_frames"]

_MAGIC = 0xFD2FB528
_SKIPPABLE_MASK = 0xFFFFFFF0
_SKIPPABLE_MAGIC = 0x184D2A50

_DICT_ID_SIZES = (0, 1, 2, 4)
_CONTENT_SIZE_SIZES = (0, 2, 4, 8)  # flag 0 means one byte when single-segment
_RAW, _RLE, _COMPRESSED = 0, 1, 2
_CHECKSUM_SIZE = 4


def check_zstd_frames(data: bytes | bytearray | memoryview) -> None:
    """Raise ValueError unless ``data`` is a run of complete zstd (or skippable) frames."""
    view = memoryview(data)
    end = len(view)
    pos = 0
    while pos < end:
        magic = _u32(view, pos, end)
        if magic & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
            pos += 8 + _u32(view, pos + 4, end)
            if pos > end:
                raise ValueError("truncated skippable zstd frame")
            continue
        if magic != _MAGIC:
            raise ValueError(f"not a zstd frame at byte {pos}")
        pos = _frame_end(view, pos + 4, end)


def _frame_end(view: memoryview, pos: int, end: int) -> int:
    """The position after the frame whose header descriptor is at ``pos``."""
    if pos >= end:
        raise ValueError("truncated zstd frame header")
    descriptor = view[pos]
    if descriptor & 0x08:
        raise ValueError("reserved bit set in a zstd frame header")
    single_segment = bool(descriptor & 0x20)
    content_size_flag = descriptor >> 6
    content_size_bytes = _CONTENT_SIZE_SIZES[content_size_flag]
    if content_size_flag == 0 and single_segment:
        content_size_bytes = 1
    pos += 1 + (0 if single_segment else 1) + _DICT_ID_SIZES[descriptor & 0x03] + content_size_bytes
    checksum = _CHECKSUM_SIZE if descriptor & 0x04 else 0
    while True:
        if pos + 3 > end:
            raise ValueError("truncated zstd block header")
        block = view[pos] | view[pos + 1] << 8 | view[pos + 2] << 16
        pos += 3
        kind = (block >> 1) & 0x03
        if kind == _RLE:
            pos += 1
        elif kind in (_RAW, _COMPRESSED):
            pos += block >> 3
        else:
            raise ValueError("reserved zstd block type")
        if pos > end:
            raise ValueError("truncated zstd block")
        if block & 1:  # the frame's last block
            pos += checksum
            if pos > end:
                raise ValueError("truncated zstd frame checksum")
            return pos


def _u32(view: memoryview, pos: int, end: int) -> int:
    if pos + 4 > end:
        raise ValueError("truncated zstd frame")
    return int.from_bytes(view[pos : pos + 4], "little")
