"""Tiered storage while the object store fails: nothing acknowledged is lost, no reader sees a gap (issue 34, must-show 2).

The three-node cluster of ``fault_cluster`` keeps producing and copying
while its store fails; each test is one fault, healed before it ends, and
ends with ``fault_checks.check_now``: lost 0, duplicates 0, gaps 0, every
partition readable from offset 0 (mostly from the remote tier), and the
remote metadata consistent with the objects in the bucket.

1. the S3 server paused (SIGSTOP) for tens of seconds: produce goes on, the
   copy lag grows while the local segments stay, a read of tiered data gets
   a retriable answer, then the copies catch up, local retention trims the
   copied segments and the read succeeds;
2. the store answering 503 (reads of tiered data get KAFKA_STORAGE_ERROR,
   copies wait), then slowly (copies move on).

Leaders failing while they copy are in ``test_tiered_leader_faults.py``, a
leader cut off by the network in ``tests/netfaults/test_tiered_partition.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from tests.cluster.fault_run import PARTITIONS
from tests.tiered.fault_checks import (
    earliest_local,
    end_marks,
    fetch_at,
    tiered_end,
    wait_copied_up_to,
)
from tests.tiered.fault_cluster import (
    KAFKA_STORAGE_ERROR,
    Faults,
    log_marks,
    open_faults,
    wait_copies_retried,
    wait_lagging,
    wait_local_trimmed,
)

from samsa.testing.cluster import wait_until
from samsa.testing.object_store import S3Server

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]

PAUSED_LAG_SEGMENTS = 6
"""Local segments every leader holds before the store resumes: at a segment
every three seconds or so per partition, the pause lasts tens of seconds."""


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server) -> Iterator[Faults]:
    with open_faults(tmp_path_factory.mktemp("tiered-store-faults"), s3_server) as made:
        yield made


def test_the_store_paused_for_tens_of_seconds(faults: Faults) -> None:
    run = faults.run
    # History to read from the remote tier only: offset 0 is gone from local disk.
    wait_copied_up_to(run, dict.fromkeys(range(PARTITIONS), 200), "history before the pause")
    wait_until(
        lambda: all(earliest_local(run, p) > 0 for p in range(PARTITIONS)),
        30,
        "local retention past offset 0 on every leader",
    )
    started = time.monotonic()
    with faults.server.paused():
        run.wait_progress("the store paused")
        answer = fetch_at(run, 0, 0, max_wait_ms=100)
        assert answer["error_code"] in (0, KAFKA_STORAGE_ERROR) and not answer["records"], (
            "a read of tiered data while the store is paused must get a retriable answer"
        )
        wait_lagging(faults, PAUSED_LAG_SEGMENTS, "the store paused")
        # By now a copy whose uploads were answered just before the pause has
        # published its end (its metadata does not go through the store), so from
        # here on nothing may be copied, and nothing uncopied deleted locally.
        tiered_before = {p: tiered_end(run, p) for p in range(PARTITIONS)}
        run.wait_progress("the store still paused")
        assert {p: tiered_end(run, p) for p in range(PARTITIONS)} == tiered_before
    paused_for = time.monotonic() - started
    wait_copied_up_to(run, end_marks(run), "after the pause")
    wait_local_trimmed(faults, "after the pause")
    answer = fetch_at(run, 0, 0)
    assert answer["error_code"] == 0 and answer["records"], answer["error_code"]
    faults.check(f"S3 server paused (SIGSTOP) for {paused_for:.0f} s and resumed")


def test_the_store_answering_5xx_then_slowly(faults: Faults) -> None:
    run = faults.run
    marks = log_marks(run)
    faults.proxy.fail_with(503)
    try:
        run.wait_progress("the store answering 503")
        codes: list[int] = []

        def storage_error() -> bool:
            codes.append(fetch_at(run, 1, 0)["error_code"])
            return codes[-1] == KAFKA_STORAGE_ERROR

        wait_until(storage_error, 30, "a read of tiered data answered KAFKA_STORAGE_ERROR")
        assert set(codes) <= {0, KAFKA_STORAGE_ERROR}
        wait_copies_retried(faults, marks, "the store answering 503")
        marks = {p: tiered_end(run, p) for p in range(PARTITIONS)}
        faults.proxy.delay(0.3)
        # Slowly, copies go on.
        wait_until(
            lambda: all(tiered_end(run, p) > mark for p, mark in marks.items()),
            60,
            "copies moving on through a slow store",
        )
        run.wait_progress("the store slow")
    finally:
        faults.proxy.pass_through()
    assert faults.proxy.failed_requests > 0
    wait_copied_up_to(run, end_marks(run), "the store well again")
    wait_local_trimmed(faults, "the store well again")
    faults.check("S3 answering 503, then slow")


def test_everything_acknowledged_is_read_back_at_the_end(faults: Faults) -> None:
    wait_copied_up_to(faults.run, end_marks(faults.run), "the end")
    faults.finish()
