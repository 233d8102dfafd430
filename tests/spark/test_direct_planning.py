"""The parts of the ``samsa`` source's direct reads that need no Spark: options, how a
range is cut into remote segments, which aborted transactions a piece gets, and the
executor's reader over a real segment in the directory store.
(``test_tiered_reads.py`` reads real tiered topics on Spark.)"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from tests.tiered.segment_files import BuiltSegment, build_segment

from samsa.spark.direct.options import parse_tiered_options
from samsa.spark.direct.partition import DirectRange, overlapping, reader_for
from samsa.spark.direct.planning import segment_pieces
from samsa.spark.direct.segment_reader import DirectRangeReader
from samsa.spark.options import SamsaSparkError, parse_read_options
from samsa.spark.ranges import OffsetRange, split_ranges
from samsa.tiered.metadata.model import (
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentState,
    TopicIdPartition,
    new_uuid,
)
from samsa.tiered.store import FileSystemSettings, S3Settings

PARTITION = TopicIdPartition(new_uuid(), "t", 0)
FS = {"rsm.config.storage.root": "/data/remote"}


def remote(start: int, end: int) -> RemoteLogSegmentMetadata:
    return RemoteLogSegmentMetadata(
        RemoteLogSegmentId(PARTITION, new_uuid()),
        start,
        end,
        0,
        1,
        0,
        (end - start + 1) * 100,
        ((0, start),),
        state=RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
    )


def spans(pieces: list[OffsetRange]) -> list[tuple[str, int, int]]:
    return [("direct" if isinstance(p, DirectRange) else "broker", p.start, p.end) for p in pieces]


def test_options_name_the_mode_and_the_store() -> None:
    assert parse_tiered_options({}).mode == "auto"
    assert parse_tiered_options({}).store is None
    fs = parse_tiered_options(FS)
    assert fs.store == FileSystemSettings(Path("/data/remote")) and fs.plans_direct_reads
    assert not parse_tiered_options({**FS, "tieredReads": "broker"}).plans_direct_reads
    s3 = parse_tiered_options(
        {
            "tieredReads": "DIRECT",
            "rsm.config.storage.backend.class": "s3",
            "rsm.config.storage.s3.bucket.name": "b",
            "rsm.config.storage.s3.endpoint.url": "http://127.0.0.1:9000",
            "rsm.config.storage.s3.path.style.access.enabled": "true",
            "rsm.config.storage.aws.access.key.id": "id",
            "rsm.config.storage.aws.secret.access.key": "secret",
            "rsm.config.key.prefix": "a",
        }
    )
    assert s3.mode == "direct" and isinstance(s3.store, S3Settings)
    assert (s3.store.bucket, s3.store.prefix, s3.store.path_style) == ("b", "a/", True)
    assert "secret" not in repr(s3)
    # through the source's own option parsing
    read = parse_read_options(
        {"kafka.bootstrap.servers": "x:1", "subscribe": "t", **FS}, stream=False
    )
    assert read.tiered == fs


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"tieredReads": "sometimes"}, "must be one of auto, direct, broker"),
        ({"tieredReads": "direct"}, "needs the object store's settings"),
        ({"rsm.config.storage.backend.class": "filesystem"}, "storage.root' is required"),
        ({"rsm.config.storage.backend.class": "s3"}, "bucket.name must be set"),
        ({"rsm.config.storage.backend.class": "gcs"}, "must be s3 or filesystem"),
    ],
)
def test_bad_options_fail_with_the_option_named(given: dict[str, str], message: str) -> None:
    with pytest.raises(SamsaSparkError, match=message):
        parse_tiered_options(given)


def test_a_range_is_cut_at_segments_and_at_the_bound() -> None:
    segments = [remote(0, 99), remote(100, 199), remote(250, 299), remote(300, 399)]
    whole = OffsetRange("t", 0, 50, 450)
    assert spans(segment_pieces(whole, segments, 350)) == [
        ("direct", 50, 100),
        ("direct", 100, 200),
        ("broker", 200, 250),  # no finished segment holds these
        ("direct", 250, 300),
        ("direct", 300, 350),
        ("broker", 350, 450),  # the local tail
    ]
    inside = segment_pieces(OffsetRange("t", 0, 120, 130), segments, 400)
    assert spans(inside) == [("direct", 120, 130)]
    piece = inside[0]
    assert isinstance(piece, DirectRange)
    assert (piece.segment_start, piece.segment_end, piece.whole_segment) == (100, 199, False)
    assert piece.log_key.endswith(".log") and piece.index_key.endswith(".index")
    assert spans(segment_pieces(OffsetRange("t", 0, 400, 500), segments, 400)) == [
        ("broker", 400, 500)
    ]


def test_split_keeps_direct_pieces_direct() -> None:
    pieces = segment_pieces(OffsetRange("t", 0, 0, 300), [remote(0, 199)], 200)
    split = split_ranges(pieces, 6)
    assert spans(split) == [("direct", s, s + 50) for s in range(0, 200, 50)] + [
        ("broker", 200, 250),
        ("broker", 250, 300),
    ]


def test_a_piece_gets_the_transactions_that_touch_it() -> None:
    aborted = [(7, 10, 20), (7, 30, 60), (8, 55, 500)]  # (producer, first, marker)
    assert overlapping(aborted, 21, 40) == [(30, 7)]  # (7, 10, 20) ended before: not listed
    assert overlapping(aborted, 0, 31) == [(10, 7), (30, 7)]
    assert overlapping(aborted, 61, 100) == [(55, 8)]
    assert overlapping(aborted, 0, 10) == []


@pytest.fixture(scope="module")
def segment(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuiltSegment, Path]:
    root = tmp_path_factory.mktemp("store")
    built = build_segment(root / "built", 500, [10, 3, 30, 1, 50] * 8, index_interval_bytes=512)
    (root / "t" / "0").mkdir(parents=True)
    (root / "t" / "0" / "seg.log").write_bytes(built.data)
    (root / "t" / "0" / "seg.index").write_bytes(built.offset_index.read_bytes())
    return built, root


def part(built: BuiltSegment, start: int, end: int) -> DirectRange:
    return DirectRange(
        "t", 0, start, end, "t/0/seg.log", "t/0/seg.index", 500, built.end_offset, len(built.data)
    )


def rows(
    built: BuiltSegment, root: Path, start: int, end: int, **kwargs: object
) -> list[pa.RecordBatch]:
    piece = part(built, start, end)
    store = FileSystemSettings(root)
    reader = DirectRangeReader(
        {}, "t", 0, start, end, part=piece, store=store, spark=True, **kwargs
    )
    with reader:
        return list(reader)


@pytest.mark.parametrize("window", [64, 4096, 1 << 20])
def test_the_executor_reads_exactly_the_range(
    segment: tuple[BuiltSegment, Path], window: int
) -> None:
    built, root = segment
    for start, end in [(500, built.end_offset + 1), (517, 611), (700, 701)]:
        batches = rows(built, root, start, end, window_bytes=window, max_rows_per_batch=37)
        offsets = [o for b in batches for o in b.column("offset").to_pylist()]
        assert offsets == list(range(start, end))
        assert all(0 < b.num_rows <= 37 for b in batches)
        keys = [k for b in batches for k in b.column("key").to_pylist()]
        assert keys == [b"k%d" % o for o in offsets]


def test_a_deleted_segment_is_data_loss(segment: tuple[BuiltSegment, Path], tmp_path: Path) -> None:
    built, _root = segment
    with pytest.raises(SamsaSparkError, match=r"offsets 517\.\.610 of t-0 were deleted"):
        rows(built, tmp_path, 517, 611)
    assert rows(built, tmp_path, 517, 611, fail_on_data_loss=False) == []


def test_each_range_gets_its_reader(segment: tuple[BuiltSegment, Path]) -> None:
    from samsa.client.arrow import PartitionRangeReader

    built, root = segment
    options = parse_read_options(
        {"kafka.bootstrap.servers": "x:1", "subscribe": "t", "rsm.config.storage.root": str(root)},
        stream=False,
    )
    assert reader_for(options, OffsetRange("t", 0, 0, 5)) is PartitionRangeReader
    direct = reader_for(options, part(built, 500, 510))
    assert getattr(direct, "func", None) is DirectRangeReader
