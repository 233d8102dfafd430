"""The durable, append-only log of metadata records on a single node.

Format of ``cluster-metadata.log``: a sequence of frames, each
``int32 length | uint32 crc32c(payload) | payload`` with a UTF-8 JSON record as
payload.  Every append is fsynced before it returns: metadata changes are rare
and losing an acknowledged topic creation is not acceptable.  On open, a torn or
corrupt tail (a crash mid-append) is cut off at the last valid frame and logged.
"""

from __future__ import annotations

import json
import logging
import os
import struct
from collections.abc import Iterator
from pathlib import Path

import crc32c

from samsa.controller.records import Record

log = logging.getLogger("samsa.controller")

_FRAME = struct.Struct(">iI")
FILE_NAME = "cluster-metadata.log"


class MetadataLog:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._records: list[Record] = []
        valid_end = self._load()
        self._file = open(self.path, "ab")  # noqa: SIM115 - kept open for appends
        if self._file.tell() != valid_end:
            dropped = self._file.tell() - valid_end
            log.warning(
                "metadata log: dropping %d bytes of torn tail at byte %d", dropped, valid_end
            )
            self._file.truncate(valid_end)
            self._file.seek(valid_end)
            os.fsync(self._file.fileno())

    def _load(self) -> int:
        if not self.path.exists():
            return 0
        data = self.path.read_bytes()
        pos = 0
        while pos + _FRAME.size <= len(data):
            length, crc = _FRAME.unpack_from(data, pos)
            start = pos + _FRAME.size
            end = start + length
            if length < 0 or end > len(data):
                break
            payload = data[start:end]
            if crc32c.crc32c(payload) != crc:
                break
            try:
                record = json.loads(payload)
            except ValueError:
                break
            self._records.append(record)
            pos = end
        return pos

    def records(self) -> Iterator[Record]:
        return iter(list(self._records))

    def append(self, records: list[Record]) -> None:
        """Append and fsync; when this returns the records survive a crash."""
        out = bytearray()
        for record in records:
            payload = json.dumps(record, separators=(",", ":"), sort_keys=True).encode()
            out += _FRAME.pack(len(payload), crc32c.crc32c(payload)) + payload
        self._file.write(out)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._records.extend(records)

    def close(self) -> None:
        self._file.close()
