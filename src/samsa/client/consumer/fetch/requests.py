"""The Fetch requests a consumer sends, through one fetch session per broker (KIP-227).

Kafka's consumer keeps a ``FetchSessionHandler`` per node; so does this.  The
first Fetch to a broker names every partition and asks for a session (epoch
0); later ones name only the partitions whose fetch offset (or other
parameter) changed and forget the ones no longer fetched -- unassigned,
paused, moved to another leader, or waiting while their buffered data is
drained -- so an idle consumer of many partitions sends a few dozen bytes per
fetch.  Session errors and failed requests make the next request full again
(the handler's rules, shared with the follower in ``samsa.protocol``).

``fetch.sessions.enable=false`` (Samsa only; Kafka's client has no such
switch) sends full requests that ask for no session, for benchmarks.

Owned by the consumer's application thread, like the Fetcher.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from samsa.client.metadata import TopicPartition
from samsa.protocol.fetch_session import FINAL_EPOCH, INITIAL_EPOCH, NO_SESSION
from samsa.protocol.fetch_session import FetchSessionHandler as _SessionHandler

__all__ = ["FetchRequests", "FetchSessionHandler"]

FetchSessionHandler = _SessionHandler[TopicPartition]
READ_COMMITTED = 1


class FetchRequests:
    """Fetch request bodies per broker, and the session each one goes through."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self._max_wait_ms: int = cfg["fetch.max.wait.ms"]
        self._min_bytes: int = cfg["fetch.min.bytes"]
        self._max_bytes: int = cfg["fetch.max.bytes"]
        self._partition_max_bytes: int = cfg["max.partition.fetch.bytes"]
        self._isolation = READ_COMMITTED if cfg["isolation.level"] == "read_committed" else 0
        self._rack: str = cfg.get("client.rack") or ""
        self._use_sessions: bool = cfg.get("fetch.sessions.enable", True)
        self.sessions: dict[int, FetchSessionHandler] = {}

    def build(self, node_id: int, offsets: Iterable[tuple[TopicPartition, int]]) -> dict[str, Any]:
        """The next Fetch to ``node_id`` for fetching exactly these partitions from these offsets."""
        wanted = {
            tp: {
                "partition": tp.partition,
                "current_leader_epoch": -1,
                "fetch_offset": offset,
                "last_fetched_epoch": -1,
                "log_start_offset": -1,
                "partition_max_bytes": self._partition_max_bytes,
            }
            for tp, offset in offsets
        }
        if not self._use_sessions:
            # Session id 0 with epoch -1: a full fetch that asks for no session.
            return self._body(NO_SESSION, FINAL_EPOCH, wanted, [])
        session = self.sessions.setdefault(node_id, FetchSessionHandler())
        return self._body(*session.build(wanted))

    @staticmethod
    def is_full(body: dict[str, Any]) -> bool:
        """Whether the request names every partition (its answer then does too)."""
        return body["session_epoch"] in (INITIAL_EPOCH, FINAL_EPOCH)

    def handle_response(self, node_id: int, body: dict[str, Any]) -> bool:
        """Whether the answer's partitions may be applied (False after a session
        error: the next request to that broker is full)."""
        session = self.sessions.get(node_id)
        return session is None or session.handle_response(body)

    def handle_error(self, node_id: int) -> None:
        """The request failed: the next one to that broker opens a new session."""
        session = self.sessions.get(node_id)
        if session is not None:
            session.handle_error()

    def close(self, skip: set[int]) -> dict[int, dict[str, Any]]:
        """The last Fetch (FINAL_EPOCH, no partitions, no wait) for each broker
        with an open session, except those in ``skip``; every session ends."""
        finals = {}
        for node_id, session in self.sessions.items():
            session_id = session.close()
            if session_id != NO_SESSION and node_id not in skip:
                body = self._body(session_id, FINAL_EPOCH, {}, [])
                body["max_wait_ms"] = 0
                finals[node_id] = body
        return finals

    def _body(
        self,
        session_id: int,
        epoch: int,
        changed: dict[TopicPartition, dict[str, Any]],
        forgotten: list[TopicPartition],
    ) -> dict[str, Any]:
        topics: dict[str, list[dict[str, Any]]] = {}
        for tp, data in changed.items():
            topics.setdefault(tp.topic, []).append(data)
        gone: dict[str, list[int]] = {}
        for tp in forgotten:
            gone.setdefault(tp.topic, []).append(tp.partition)
        return {
            "replica_id": -1,
            "max_wait_ms": self._max_wait_ms,
            "min_bytes": self._min_bytes,
            "max_bytes": self._max_bytes,
            "isolation_level": self._isolation,
            "session_id": session_id,
            "session_epoch": epoch,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
            "forgotten_topics_data": [{"topic": t, "partitions": ps} for t, ps in gone.items()],
            "rack_id": self._rack,
        }
