"""LogSegment: append, indexed reads, timestamp lookups, recovery of one segment."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_batch import iter_batches, read_batch_header, stamp_batch
from samsa.storage.segments.segment import LogSegment, segment_file_name
from samsa.storage.topic_config.keys import DECOMPRESSED_MAX as NO_LIMIT

from .log_helpers import make_batch


def _open(tmp_path: Path, base: int = 0, interval: int = 0) -> LogSegment:
    return LogSegment.open(
        tmp_path, base, index_interval_bytes=interval, max_index_bytes=4096, now_ms=0
    )


def _append(segment: LogSegment, offset: int, count: int, ts: int = 1000, **kw: object) -> int:
    batch = make_batch(count, timestamp=ts, **kw)  # type: ignore[arg-type]
    stamp_batch(batch, 0, offset, 0)
    segment.append(batch, [read_batch_header(batch)])
    return offset + count


def test_files_are_named_by_20_digit_base_offset(tmp_path: Path) -> None:
    _open(tmp_path, 42)
    assert segment_file_name(42, ".log") == "00000000000000000042.log"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000000042.index",
        "00000000000000000042.log",
        "00000000000000000042.timeindex",
    ]


def test_append_indexes_every_interval_and_reads_whole_batches(tmp_path: Path) -> None:
    segment = _open(tmp_path, 100, interval=1)
    offset = 100
    for i in range(10):
        offset = _append(segment, offset, 3, ts=1000 + i)
    # interval 1 byte: every batch after the first gets an entry
    assert segment.offset_index.entries == 9
    assert segment.read_next_offset() == 130
    found = segment.translate_offset(107)
    assert found is not None
    assert found[1].base_offset == 106 and found[1].last_offset == 108
    read = segment.read(107, 10_000)
    assert read is not None
    data = read.region.read_bytes()
    assert [h.base_offset for _, h in iter_batches(data)] == list(range(106, 130, 3))
    assert segment.read(130, 100) is None


def test_read_respects_max_bytes_and_min_one(tmp_path: Path) -> None:
    segment = _open(tmp_path, interval=1)
    offset = 0
    for _ in range(5):
        offset = _append(segment, offset, 2)
    size = read_batch_header(segment.log.read(0, 61)).size
    read = segment.read(0, size * 2 + 5)
    assert read is not None and len(read.region) == size * 2
    read = segment.read(0, 1)
    assert read is not None and len(read.region) == size  # at least one whole batch
    read = segment.read(0, 1, min_one=False)
    assert read is not None and len(read.region) == 0
    read = segment.read(0, 10_000, max_position=size * 3)
    assert read is not None and len(read.region) == size * 3


def test_find_offset_by_timestamp_inside_compressed_batch(tmp_path: Path) -> None:
    segment = _open(tmp_path)
    batch = make_batch(5, timestamps=[100, 300, 200, 500, 400], compression=Compression.ZSTD)
    segment.append(batch, [read_batch_header(batch)])
    assert segment.find_offset_by_timestamp(250, 0, NO_LIMIT) == (1, 300)
    assert segment.find_offset_by_timestamp(450, 0, NO_LIMIT) == (3, 500)
    assert segment.find_offset_by_timestamp(501, 0, NO_LIMIT) is None
    assert segment.record_with_max_timestamp(NO_LIMIT) == (3, 500)


@pytest.mark.parametrize("codec", [Compression.GZIP, Compression.ZSTD])
def test_timestamp_lookup_refuses_compressed_records_over_the_decompressed_limit(
    tmp_path: Path, codec: Compression
) -> None:
    """max.decompressed.message.bytes: a record body of a compressed batch over it is
    INVALID_RECORD, as Kafka's lookup; an uncompressed batch is not limited."""
    segment = _open(tmp_path)
    batch = make_batch(3, timestamps=[100, 200, 300], value_size=100, compression=codec)
    segment.append(batch, [read_batch_header(batch)])
    assert segment.find_offset_by_timestamp(150, 0, 120) == (1, 200)
    for lookup in (
        lambda: segment.find_offset_by_timestamp(150, 0, 100),
        lambda: segment.record_with_max_timestamp(100),
    ):
        with pytest.raises(KafkaError) as refused:
            lookup()
        assert refused.value.code == ErrorCode.INVALID_RECORD
        assert "max.decompressed.message.bytes" in str(refused.value)
    (tmp_path / "plain").mkdir()
    plain = _open(tmp_path / "plain")
    batch = make_batch(3, timestamps=[100, 200, 300], value_size=100)
    plain.append(batch, [read_batch_header(batch)])
    assert plain.find_offset_by_timestamp(150, 0, 100) == (1, 200)


def test_recover_truncates_torn_tail_and_rebuilds_indexes(tmp_path: Path) -> None:
    segment = _open(tmp_path, interval=1)
    offset = 0
    for _ in range(4):
        offset = _append(segment, offset, 2)
    good = segment.size
    offset = _append(segment, offset, 2)
    segment.log.truncate_to(segment.size - 7)  # torn last batch
    segment.offset_index.reset()
    result = segment.recover()
    assert result.valid_bytes == good
    assert result.next_offset == 8
    assert result.truncated_bytes > 0
    assert segment.offset_index.entries == 3
    assert segment.read_next_offset() == 8


@pytest.mark.parametrize("size", [0, 1, 12, 30])
def test_recover_handles_tiny_garbage_tails(tmp_path: Path, size: int) -> None:
    segment = _open(tmp_path)
    _append(segment, 0, 2)
    good = segment.size
    segment.log.append(b"\xff" * size)
    result = segment.recover()
    assert result.valid_bytes == good
    assert segment.size == good


def _open_files_under(directory: Path) -> list[str]:
    """Names of the files in ``directory`` this process holds a descriptor on."""
    names = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = Path(fd.readlink())
        except OSError:
            continue
        if target.parent == directory:
            names.append(target.suffix)
    return sorted(names)


def test_indexes_hold_a_descriptor_only_while_written(tmp_path: Path) -> None:
    """10,000 idle partitions must fit the open-file limit: an idle segment
    keeps only its .log open, a written one its indexes too until it is rolled."""
    segment = _open(tmp_path, interval=1)
    assert _open_files_under(tmp_path) == [".log"]
    offset = _append(segment, 0, 3)
    _append(segment, offset, 3)
    assert _open_files_under(tmp_path) == [".index", ".log", ".timeindex"]
    segment.on_become_inactive()
    assert _open_files_under(tmp_path) == [".log"]
    segment.flush()  # what was written through the released descriptors
    reopened = _open(tmp_path, interval=1)
    assert reopened.offset_index.entries == segment.offset_index.entries == 1
    assert reopened.time_index.entries == segment.time_index.entries == 1
    segment.close()
    reopened.close()
    assert _open_files_under(tmp_path) == []


def test_a_segment_opened_lazily_makes_no_path_objects_until_one_is_asked_for(
    tmp_path: Path,
) -> None:
    """At start-up a broker of 10,000 partitions opens a segment each; a pathlib
    ``Path`` per file was a fifth of that.  The names are still right when asked."""
    segment = LogSegment.open(
        tmp_path, 7, index_interval_bytes=0, max_index_bytes=4096, now_ms=0, lazy_indexes=True
    )
    assert segment.log._path is None and segment.log._where is not None
    end = _append(segment, 7, 3)
    assert end == 10 and segment.size > 0
    assert segment.log.path == tmp_path / segment_file_name(7, ".log")
    assert segment.log.path.stat().st_size == segment.size
