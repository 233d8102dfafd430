"""Start a fresh broker by name for the client benchmarks: the peer (tansu) or Samsa's own."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "client"))

BROKERS = ("tansu", "samsa")


@contextmanager
def broker(name: str) -> Iterator[str]:
    """Yield the bootstrap address of a new broker, stopped (and its data removed) after."""
    if name == "tansu":
        from _tansu import Tansu

        peer = Tansu()
        try:
            yield peer.bootstrap
        finally:
            peer.stop()
    elif name == "samsa":
        from samsa.testing import BrokerProcess

        with tempfile.TemporaryDirectory(prefix="samsa-bench-") as tmp:
            proc = BrokerProcess(Path(tmp) / "data")
            try:
                yield proc.start()
            finally:
                proc.stop()
    else:
        raise SystemExit(f"unknown broker {name!r} ({', '.join(BROKERS)})")
