"""The commands of docs/ that need a broker run against one, as the pages print them.

Those pages share one broker, in turn; the pages that start processes of their
own are in test_doc_background_pages.py.  A block that fails names its page and
line and shows its output (docs/README.md, "Tested examples").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.docs.doc_blocks import REPO, parse
from tests.docs.isolation import own_loopback
from tests.docs.page_runner import PageBroker, has_background, run_page, runnable, scratch_dir

PAGES = sorted((REPO / "docs").glob("*.md"))
RUN_PAGES = [p for p in PAGES if runnable(parse(p))]
SHARED = [p for p in RUN_PAGES if not has_background(parse(p))]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


def test_pages_on_one_broker(tmp_path: Path) -> None:
    """Every page whose commands need only a broker, in turn, against one broker."""
    assert SHARED, "no page of docs/ has broker blocks: this test would check nothing"
    with own_loopback() as prefix:
        broker = PageBroker(tmp_path / "broker-data", prefix)
        try:
            for page in SHARED:
                run_page(parse(page), scratch_dir(tmp_path / page.stem), prefix, broker)
        finally:
            broker.stop()
