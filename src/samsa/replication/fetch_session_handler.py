"""A fetcher's side of an incremental fetch session (KIP-227): Kafka's FetchSessionHandler.

The first Fetch to a leader names every partition (session epoch 0); if the
leader opens a session, later ones name only the partitions whose fetch
parameters changed since the last request (a new fetch offset after an
append, a new leader epoch) and list in ``forgotten_topics_data`` the ones no
longer fetched, so a follower of thousands of idle partitions sends a
request of a few dozen bytes.  The leader keeps reading every partition of
the session and answers only those with news.

Any doubt goes back to a full request: a session error from the leader
(FETCH_SESSION_ID_NOT_FOUND after it restarted or evicted the session: a new
session; INVALID_FETCH_SESSION_EPOCH: close this one and open another), a
failed request (the leader may or may not have seen it, so the epochs may
differ).  A leader that answers a full request with session id 0 (sessions
off, cache full) gets full requests from then on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.errors import ErrorCode
from samsa.replication.fetcher_types import TopicPartition

__all__ = ["FetchSessionHandler", "SessionRequest"]

NO_SESSION = 0
INITIAL_EPOCH = 0
MAX_EPOCH = 0x7FFFFFFF
SESSION_ERRORS = frozenset(
    {ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH}
)

PartitionData = dict[str, Any]
SessionRequest = tuple[int, int, dict[TopicPartition, PartitionData], list[TopicPartition]]
"""session id, session epoch, partitions to send, partitions to forget."""


class FetchSessionHandler:
    """The session with one leader: its id, the next epoch, and what the leader
    remembers of each partition."""

    def __init__(self) -> None:
        self.session_id = NO_SESSION
        self.next_epoch = INITIAL_EPOCH
        self._in_session: dict[TopicPartition, PartitionData] = {}
        self._last_was_full = True

    def build(self, wanted: Mapping[TopicPartition, PartitionData]) -> SessionRequest:
        """What the next Fetch carries for fetching exactly ``wanted``."""
        previous, self._in_session = self._in_session, dict(wanted)
        self._last_was_full = self.next_epoch == INITIAL_EPOCH
        if self._last_was_full:
            return self.session_id, INITIAL_EPOCH, dict(wanted), []
        changed = {tp: data for tp, data in wanted.items() if previous.get(tp) != data}
        forgotten = [tp for tp in previous if tp not in wanted]
        return self.session_id, self.next_epoch, changed, forgotten

    def handle_response(self, body: Mapping[str, Any]) -> bool:
        """Whether the response's partitions may be applied (False on a session
        error: the next request is full)."""
        code = body.get("error_code", 0)
        if code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND:
            self._start_over(close=False)
            return False
        if code:
            self._start_over(close=True)
            return False
        session_id = body.get("session_id", NO_SESSION)
        if session_id == NO_SESSION:
            # Sessionless leader, or it closed our session: full requests.
            self._start_over(close=False)
        elif self._last_was_full:
            self.session_id, self.next_epoch = session_id, 1
        else:
            self.next_epoch = 1 if self.next_epoch >= MAX_EPOCH else self.next_epoch + 1
        return True

    def handle_error(self) -> None:
        """The request failed: whether the leader saw it is unknown, so close the
        session and send everything again."""
        self._start_over(close=True)

    def _start_over(self, *, close: bool) -> None:
        if not close:
            self.session_id = NO_SESSION
        self.next_epoch = INITIAL_EPOCH
