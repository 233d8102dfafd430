"""A stored decompression bomb shown by the console: reported, not inflated.

On a topic without compaction or schema validation the broker stores a
client's compressed batch without looking inside, as Kafka does, so a few KB
of zstd can sit in the log claiming hundreds of MB.  The console runs in the
broker's process; its message browser and search must say the batch is too
large to show (``MAX_INFLATED_BATCH``) instead of inflating it, and the broker's
peak RSS (the kernel's high-water mark, reset just before) must not grow by
the bomb's size.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.console.conftest import api
from tests.integration.raw_client import RawClient
from tests.integration.test_decompression_bomb import _status_kb, batch, create, produce

from samsa.console.messages import MAX_INFLATED_BATCH
from samsa.protocol.batches.compression import Compression
from samsa.testing import BrokerProcess

BOMB_BYTES = 384 << 20
MB = 1 << 20


def test_the_console_reports_a_stored_bomb_without_inflating_it(
    broker: BrokerProcess, console_url: str
) -> None:
    topic = "stored-bomb"
    raw = RawClient(broker.bootstrap)
    try:
        create(raw, topic, {"max.message.bytes": str(16 * MB)})
        stored = produce(
            raw, topic, batch(Compression.ZSTD, [bytes(BOMB_BYTES)], int(time.time() * 1000))
        )
        assert stored["error_code"] == 0, stored  # a plain topic stores it unread
    finally:
        raw.close()
    assert broker.proc is not None
    pid = broker.proc.pid
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # reset the peak RSS mark
    before = _status_kb(pid, "VmRSS")

    status, page = api(console_url, f"/api/topics/{topic}/messages?from=oldest")
    assert status == 200, page
    (partition,) = page["partitions"]
    assert "decompress" in partition["error"], partition
    status, found = api(console_url, f"/api/topics/{topic}/search?q=anything")
    assert status == 200, found
    assert "decompress" in str(found), found

    growth_mb = (_status_kb(pid, "VmHWM") - before) // 1024
    assert growth_mb < MAX_INFLATED_BATCH // MB + 96, f"the broker's RSS grew by {growth_mb} MB"
    assert broker.running
