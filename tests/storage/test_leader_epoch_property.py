"""Whatever a replica does to its log -- leader and follower appends, truncation
to any offset, log start moves, a crash that tears the tail -- its leader epoch
cache says what the batches on disk say: each epoch starts at the first batch
that carries it, cut at the log start."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.protocol.batches.record_batch import stamp_batch
from samsa.storage.leader_epoch_cache import EpochEntry, LeaderEpochFileCache, newer_epochs
from samsa.storage.log import Log
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "400", "index.interval.bytes": "100"})

operation = st.one_of(
    st.tuples(st.just("lead"), st.integers(0, 2), st.integers(1, 4)),  # epoch bump, records
    st.tuples(st.just("follow"), st.integers(0, 2), st.integers(1, 4)),
    st.tuples(st.just("truncate"), st.integers(0, 60), st.just(0)),
    st.tuples(st.just("delete_records"), st.integers(0, 60), st.just(0)),
)


def expected_entries(log: Log) -> list[EpochEntry]:
    """The cache derived from the batches alone."""
    derived = LeaderEpochFileCache(None, "expected")
    derived.assign_all(newer_epochs(log.iter_batch_headers(log.segments[0].base_offset), -1))
    derived.truncate_from_start(log.log_start_offset)
    return derived.entries()


def covering(entries: list[EpochEntry], log: Log) -> list[EpochEntry]:
    """The entries that cover data.  One that starts at the log end (left when the
    log start or a truncation reached the end) may be there or not: it says only
    which epoch the next record would have."""
    return [e for e in entries if e.start_offset < log.log_end_offset]


@settings(max_examples=60, deadline=None)
@given(operations=st.lists(operation, min_size=1, max_size=25), cut=st.integers(0, 200))
def test_the_cache_matches_the_batches_after_any_history(
    operations: list[tuple[str, int, int]], cut: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "t-0"
        log = Log.open(directory, "t", 0, CONFIG)
        epoch = 0
        for kind, value, records in operations:
            if kind == "lead":
                epoch += value
                log.append(make_batch(records), leader_epoch=epoch)
            elif kind == "follow":
                epoch += value
                batch = make_batch(records, base_offset=log.log_end_offset)
                stamp_batch(batch, 0, log.log_end_offset, epoch)
                log.append(batch, assign_offsets=False)
            elif kind == "truncate":
                log.truncate_to(value)
            elif value <= log.log_end_offset:
                log.delete_records(value)
            assert covering(log.leader_epoch_cache.entries(), log) == covering(
                expected_entries(log), log
            )
        start = log.log_start_offset

        # A crash: nothing flushed, the last segment torn somewhere.
        last = log.segments[-1].log.path
        os.truncate(last, max(0, last.stat().st_size - cut))
        reopened = Log.open(directory, "t", 0, CONFIG, log_start_offset=start)
        # On load an entry that starts at the log end holds no data and is
        # dropped, as Kafka's loader does (a leader assigns it again when elected).
        assert reopened.leader_epoch_cache.entries() == covering(
            expected_entries(reopened), reopened
        )
