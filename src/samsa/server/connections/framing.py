"""Cut a connection's byte stream into size-prefixed request frames, copying little.

The socket server reads with ``recv_into`` (asyncio's BufferedProtocol) into
the buffer this reader hands out.  Small requests land in a reusable scratch
buffer and are copied out once each.  A request larger than the scratch buffer
(a produce of a big batch) gets a buffer of its own, sized from its length
prefix, and the kernel writes its body straight into it: the frame the broker
dispatches is that ``bytearray`` -- writable, so the produce path can stamp
offsets into the batches in place and write them to the log without another
copy.  No sockets here: the reader only sees buffers and byte counts.
"""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")
SCRATCH_BYTES = 64 * 1024
# Compact the scratch buffer before handing out less room than this.
_MIN_ROOM = 16 * 1024


class FrameTooLarge(Exception):
    """A length prefix that is negative or above the limit (the stream cannot be trusted)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds socket.request.max.bytes={limit}")
        self.size = size


class FrameReader:
    """Hands out receive buffers and returns the frames completed by each read."""

    __slots__ = ("_body", "_body_view", "_end", "_got", "_max", "_scratch", "_start", "_view")

    def __init__(self, max_frame_bytes: int, scratch_bytes: int = SCRATCH_BYTES) -> None:
        self._max = max_frame_bytes
        self._scratch = bytearray(scratch_bytes)
        self._view = memoryview(self._scratch)
        self._start = 0  # first byte not yet cut into a frame
        self._end = 0  # end of received bytes in the scratch buffer
        self._body: bytearray | None = None  # a large frame being received
        self._body_view = memoryview(b"")
        self._got = 0

    def set_limit(self, max_frame_bytes: int) -> None:
        """Change the largest frame accepted (a SASL listener raises it after login)."""
        self._max = max_frame_bytes

    def buffer(self) -> memoryview:
        """Where the next received bytes go."""
        if self._body is not None:
            return self._body_view[self._got :]
        if len(self._scratch) - self._end < _MIN_ROOM and self._start:
            self._compact()
        return self._view[self._end :]

    def received(self, nbytes: int) -> list[bytes | bytearray]:
        """Account for ``nbytes`` written into the last buffer; returns whole frames.

        Raises FrameTooLarge on an impossible length prefix.
        """
        if self._body is not None:
            self._got += nbytes
            if self._got < len(self._body):
                return []
            frame = self._body
            self._body = None
            self._body_view = memoryview(b"")
            return [frame]
        self._end += nbytes
        return self._cut()

    def _cut(self) -> list[bytes | bytearray]:
        frames: list[bytes | bytearray] = []
        view = self._view
        pos, end = self._start, self._end
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(view, pos)
            if size < 0 or size > self._max:
                raise FrameTooLarge(size, self._max)
            if end - pos - 4 >= size:
                frames.append(bytes(view[pos + 4 : pos + 4 + size]))
                pos += 4 + size
                continue
            if size + 4 > len(self._scratch):
                # Too big for the scratch buffer: receive the rest into its own.
                body = bytearray(size)
                have = end - pos - 4
                body[:have] = view[pos + 4 : end]
                self._body, self._body_view, self._got = body, memoryview(body), have
                pos = end
            break
        if pos == end:
            self._start = self._end = 0
        else:
            self._start = pos
        return frames

    def _compact(self) -> None:
        """Move the unfinished frame's bytes to the front of the scratch buffer."""
        n = self._end - self._start
        # Through bytes: the two regions may overlap.
        self._scratch[:n] = bytes(self._view[self._start : self._end])
        self._start, self._end = 0, n
