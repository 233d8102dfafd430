"""The search's slice scanner (``samsa.console.search_scan``), without a broker:
budgets, where a partition's search goes on from, markers, deleted records."""

from __future__ import annotations

from samsa.console.search_scan import Cursor, Needle, scan_slice
from samsa.protocol.batches.record_builder import ControlType, RecordBatchBuilder, control_batch


def batch(base: int, values: list[bytes], headers: list[tuple[str, bytes]] | None = None) -> bytes:
    builder = RecordBatchBuilder(base_offset=base)
    for value in values:
        builder.append(1000, b"k", value, headers or [])
    return bytes(builder.build())


# Offsets 0-4 (one batch), a marker at 5, 6-9 (one batch).
LOG = (
    batch(0, [b"alpha", b"NEEDLE one", b"beta", b"gamma", b"needle two"])
    + control_batch(
        ControlType.COMMIT, producer_id=1, producer_epoch=0, timestamp_ms=1000, base_offset=5
    )
    + batch(6, [b"delta", b"\xff\xfe binary", b"epsilon", b"needle three"])
)


def offsets(rows: list[dict[str, object]]) -> list[object]:
    return [r["offset"] for r in rows]


def test_forward_scans_from_the_position_and_steps_over_the_marker() -> None:
    cursor = Cursor(0, 0, 0, 10, backward=False)
    found = scan_slice(cursor, LOG, 0, 10, Needle.of("needle"), scans=100, wanted=100)
    assert (offsets(found.rows), found.scanned, found.position) == ([1, 4, 9], 9, 10)
    # Stopping at the second match continues right after it.
    found = scan_slice(cursor, LOG, 0, 10, Needle.of("needle"), scans=100, wanted=2)
    assert (offsets(found.rows), found.scanned, found.position) == ([1, 4], 5, 5)
    # A scan budget of 3 from offset 2: 2, 3, 4 scanned, on from 5 (the marker).
    found = scan_slice(Cursor(0, 2, 0, 10, False), LOG, 2, 10, Needle.of("needle"), 3, 100)
    assert (offsets(found.rows), found.scanned, found.position) == ([4], 3, 5)
    # From the marker: it is passed over, not counted.
    data = LOG[len(batch(0, [b"alpha", b"NEEDLE one", b"beta", b"gamma", b"needle two"])) :]
    found = scan_slice(Cursor(0, 5, 0, 10, False), data, 5, 10, Needle.of("x"), 100, 100)
    assert (found.scanned, found.position) == (4, 10)


def test_backward_scans_newest_first_and_takes_the_whole_first_batch() -> None:
    cursor = Cursor(0, 10, 0, 10, backward=True)
    # The slice was read from offset 3, inside the first batch: 0-2 come with it.
    found = scan_slice(cursor, LOG, 3, 10, Needle.of("needle"), scans=100, wanted=100)
    assert (offsets(found.rows), found.scanned, found.position) == ([9, 4, 1], 9, 0)
    found = scan_slice(cursor, LOG, 3, 10, Needle.of("needle"), scans=100, wanted=1)
    assert (offsets(found.rows), found.position) == ([9], 9)  # 9 and up are done
    # Deleted records (below the log start offset, 2) are never scanned.
    found = scan_slice(Cursor(0, 10, 2, 10, True), LOG, 2, 10, Needle.of("needle"), 100, 100)
    assert (offsets(found.rows), found.scanned, found.position) == ([9, 4], 7, 2)
    # Data that stops short of the range's end covers nothing.
    short = batch(0, [b"alpha", b"NEEDLE one"])
    found = scan_slice(cursor, short, 0, 10, Needle.of("needle"), 100, 100)
    assert (found.covered, found.scanned, found.rows) == (False, 0, [])


def test_what_matches() -> None:
    cursor = Cursor(0, 0, 0, 10, backward=False)

    def hits(text: str) -> list[object]:
        return offsets(scan_slice(cursor, LOG, 0, 10, Needle.of(text), 100, 100).rows)

    assert hits("NeEdLe") == [1, 4, 9]  # case ignored
    assert hits("ff fe") == [7]  # the bytes a hex text spells
    assert hits("k") == [0, 1, 2, 3, 4, 6, 7, 8, 9]  # keys count
    headed = batch(0, [b"plain"], [("trace-id", "Zürich".encode())])
    assert offsets(scan_slice(cursor, headed, 0, 1, Needle.of("zÜrich"), 10, 10).rows) == [0]
    assert offsets(scan_slice(cursor, headed, 0, 1, Needle.of("TRACE"), 10, 10).rows) == [0]
