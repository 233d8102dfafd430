"""Batch spans of a log read: from bytes, and from a file region by headers alone."""

from __future__ import annotations

from pathlib import Path

from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.server.coordinators.share_records import batch_spans, cut
from samsa.storage.segments.file_region import FileRegion


def batches() -> bytes:
    out = b""
    for base, count in ((0, 3), (3, 2), (5, 4)):
        builder = RecordBatchBuilder(batch_size=1 << 20, base_offset=base)
        for i in range(count):
            builder.append(0, None, b"v%d" % (base + i))
        out += bytes(builder.build())
    return out


def test_spans_from_bytes_and_from_a_file_region_agree(tmp_path: Path) -> None:
    data = batches()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"junk" + data + data[:30])  # a truncated tail after the batches
    with path.open("rb") as file:
        region = FileRegion(file, 4, len(data) + 30)
        from_file = batch_spans(region, horizon=100)
        assert [(s.base_offset, s.last_offset) for s in from_file] == [(0, 2), (3, 4), (5, 8)]
        assert batch_spans(data, horizon=100) == from_file
        first_two = batch_spans(region, horizon=5)
        assert [s.base_offset for s in first_two] == [0, 3]
        end = first_two[-1].position + first_two[-1].size
        sliced = cut(region, 0, end)
        assert isinstance(sliced, FileRegion) and sliced.read_bytes() == data[:end]
    assert cut(data, 0, len(data)) is data
