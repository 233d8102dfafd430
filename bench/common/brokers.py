"""Start a fresh broker by name for the client benchmarks: a peer (tansu, Apache
Kafka) or Samsa's own."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common.peers import PEERS, peer_broker

BROKERS = (*PEERS, "samsa")


@contextmanager
def broker(name: str) -> Iterator[str]:
    """Yield the bootstrap address of a new broker, stopped (and its data removed) after."""
    if name in PEERS:
        with peer_broker(name) as peer:
            yield peer.bootstrap
    elif name == "samsa":
        from samsa.testing import BrokerProcess

        with tempfile.TemporaryDirectory(prefix="samsa-bench-") as tmp:
            proc = BrokerProcess(Path(tmp) / "data")
            try:
                yield proc.start(timeout=120)
            finally:
                proc.stop()
    else:
        raise SystemExit(f"unknown broker {name!r} ({', '.join(BROKERS)})")
