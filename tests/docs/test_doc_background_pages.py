"""The doc pages that start processes of their own (a broker with other settings,
the example cluster), each on a loopback of its own, as the pages print them."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.docs.doc_blocks import REPO, parse
from tests.docs.isolation import own_loopback
from tests.docs.page_runner import PageBroker, has_background, run_page, runnable, scratch_dir

OWN = [p for p in sorted((REPO / "docs").glob("*.md")) if has_background(runnable(parse(p)))]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.mark.parametrize("page", OWN, ids=[p.name for p in OWN])
def test_page_with_its_own_processes(page: Path, tmp_path: Path) -> None:
    with own_loopback() as prefix:
        broker = PageBroker(tmp_path / "broker-data", prefix)
        try:
            run_page(parse(page), scratch_dir(tmp_path / "work"), prefix, broker)
        finally:
            broker.stop()
