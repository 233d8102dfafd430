"""A follower's side of an incremental fetch session (KIP-227).

The session logic is pure protocol state shared with the consumer, so it lives
in ``samsa.protocol.fetch_session``; this module keeps the follower's import.
"""

from samsa.protocol.fetch_session import (
    INITIAL_EPOCH,
    SESSION_ERRORS,
    FetchSessionHandler,
    SessionRequest,
)

__all__ = ["INITIAL_EPOCH", "SESSION_ERRORS", "FetchSessionHandler", "SessionRequest"]
