"""A fetcher's side of an incremental fetch session (KIP-227): Kafka's FetchSessionHandler.

Shared by the follower's fetcher (``samsa.replication``) and the consumer's
(``samsa.client``), which may only depend on the protocol package; it is pure
state, keyed by whatever partition type the caller uses.

The first Fetch to a broker names every partition (session epoch 0); if the
broker opens a session, later ones name only the partitions whose fetch
parameters changed since the last request (a new fetch offset after an
append, a new log start, max bytes or leader epoch) and list in
``forgotten_topics_data`` the ones no longer fetched, so a fetcher of
thousands of idle partitions sends a request of a few dozen bytes.  The
broker keeps reading every partition of the session and answers only those
with news; a partition missing from an incremental answer has no data.

Any doubt goes back to a full request: a session error from the broker
(FETCH_SESSION_ID_NOT_FOUND after it restarted or evicted the session: a new
session; INVALID_FETCH_SESSION_EPOCH or any other error: close this one and
open another), a failed request (the broker may or may not have seen it, so
the epochs may differ).  A broker that answers a full request with session
id 0 (sessions off, cache full) gets full requests from then on.  ``close``
gives the session id to send with FINAL_EPOCH, which frees the broker's slot.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from samsa.errors import ErrorCode

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "NO_SESSION",
    "SESSION_ERRORS",
    "FetchSessionHandler",
    "SessionRequest",
]

NO_SESSION = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_EPOCH = 0x7FFFFFFF
SESSION_ERRORS = frozenset(
    {ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH}
)

K = TypeVar("K", bound=Hashable)
PartitionData = dict[str, Any]
SessionRequest = tuple[int, int, dict[K, PartitionData], list[K]]
"""session id, session epoch, partitions to send, partitions to forget."""


class FetchSessionHandler(Generic[K]):
    """The session with one broker: its id, the next epoch, and what the broker
    remembers of each partition.  Owned by the thread that fetches from it."""

    def __init__(self) -> None:
        self.session_id = NO_SESSION
        self.next_epoch = INITIAL_EPOCH
        self._in_session: dict[K, PartitionData] = {}
        self._last_was_full = True

    @property
    def partitions(self) -> Mapping[K, PartitionData]:
        """What the broker fetches for us as of the last ``build``."""
        return self._in_session

    def build(self, wanted: Mapping[K, PartitionData]) -> SessionRequest[K]:
        """What the next Fetch carries for fetching exactly ``wanted``."""
        previous, self._in_session = self._in_session, dict(wanted)
        self._last_was_full = self.next_epoch == INITIAL_EPOCH
        if self._last_was_full:
            return self.session_id, INITIAL_EPOCH, dict(wanted), []
        changed = {tp: data for tp, data in wanted.items() if previous.get(tp) != data}
        forgotten = [tp for tp in previous if tp not in wanted]
        return self.session_id, self.next_epoch, changed, forgotten

    def build_changes(
        self, wanted: Mapping[K, PartitionData], touched: Iterable[K]
    ) -> SessionRequest[K]:
        """``build`` for a caller that knows which partitions may differ from the
        last request (``touched``; the rest of ``wanted`` is as last sent): only
        those are compared, so an idle fetcher's request costs O(touched)."""
        if self.next_epoch == INITIAL_EPOCH:
            return self.build(wanted)
        self._last_was_full = False
        in_session = self._in_session
        changed: dict[K, PartitionData] = {}
        forgotten: list[K] = []
        for key in touched:
            data = wanted.get(key)
            previous = in_session.get(key)
            if data is None:
                if previous is not None:
                    del in_session[key]
                    forgotten.append(key)
            elif data != previous:
                in_session[key] = data
                changed[key] = data
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
            # Sessionless broker, or it closed our session: full requests.
            self._start_over(close=False)
        elif self._last_was_full:
            self.session_id, self.next_epoch = session_id, 1
        else:
            self.next_epoch = 1 if self.next_epoch >= MAX_EPOCH else self.next_epoch + 1
        return True

    def handle_error(self) -> None:
        """The request failed: whether the broker saw it is unknown, so close the
        session and send everything again."""
        self._start_over(close=True)

    def close(self) -> int:
        """The session id to send with FINAL_EPOCH (and no partitions) so the
        broker frees its slot, or NO_SESSION when there is none to free; the
        next request, if any, is full.  A session an error left to be closed by
        the next full request is named too: ending an unknown one is no error."""
        session_id = self.session_id
        self._start_over(close=False)
        self._in_session = {}
        return session_id

    def _start_over(self, *, close: bool) -> None:
        if not close:
            self.session_id = NO_SESSION
        self.next_epoch = INITIAL_EPOCH
