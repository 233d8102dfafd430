"""Any cut of the log's last file recovers to a valid prefix of what was written.

A flipped byte anywhere except a batch's base offset is caught (length, magic
or CRC).  The base offset lies outside the CRC in Kafka's format and a larger
one is legal after compaction, so -- as in Kafka -- recovery cannot tell a
flipped base offset from a real gap; the property leaves those 8 bytes alone.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.protocol.batches.record_batch import iter_batches
from samsa.storage.log import Log
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "700", "index.interval.bytes": "150"})


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=20),
    cut=st.integers(min_value=0, max_value=10_000),
    flip=st.one_of(st.none(), st.integers(min_value=0, max_value=10_000)),
)
def test_recovery_yields_a_prefix(sizes: list[int], cut: int, flip: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log = Log.open(directory, "t", 0, CONFIG)
        written: list[tuple[int, int]] = []
        for n in sizes:
            info = log.append(make_batch(n, value_size=n * 7))
            written.append((info.first_offset, info.last_offset))
        last = log.active_segment.log.path
        size = last.stat().st_size
        os.truncate(last, size - cut % (size + 1))
        if flip is not None:
            data = bytearray(last.read_bytes())
            offset_fields = {p + i for p, _ in iter_batches(data) for i in range(8)}
            candidates = [i for i in range(len(data)) if i not in offset_fields]
            if candidates:
                data[candidates[flip % len(candidates)]] ^= 0x5A
                last.write_bytes(data)

        recovered = Log.open(directory, "t", 0, CONFIG)
        headers = [(h.base_offset, h.last_offset) for h in recovered.iter_batch_headers()]
        assert headers == written[: len(headers)]
        assert recovered.log_end_offset == (headers[-1][1] + 1 if headers else 0)
        # the recovered log accepts appends at its end and reads them back
        info = recovered.append(make_batch(1))
        assert info.first_offset == recovered.log_end_offset - 1
        assert recovered.read(info.first_offset, 1000).records
