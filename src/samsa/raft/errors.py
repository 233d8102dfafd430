"""Raft's error codes and exceptions.

Responses carry Kafka's numeric error codes.  Most come from
``samsa.errors.ErrorCode``; the three KIP-853 codes it does not list yet are
defined here with Kafka's numbers (``org.apache.kafka.common.protocol.Errors``).
"""

from __future__ import annotations

from enum import IntEnum

from samsa.errors import ErrorCode, KafkaError, SamsaError

__all__ = [
    "ErrorCode",
    "KRaftErrorCode",
    "NotLeaderError",
    "RaftInvariantError",
    "error_name",
]


class KRaftErrorCode(IntEnum):
    """Kafka error codes used by KIP-853 that ``samsa.errors.ErrorCode`` lacks."""

    INVALID_VOTER_KEY = 125
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127


def error_name(code: int) -> str:
    """The Kafka name of ``code`` (for messages and logs)."""
    for enum in (ErrorCode, KRaftErrorCode):
        try:
            return enum(code).name
        except ValueError:
            continue
    return f"UNKNOWN({code})"


class NotLeaderError(KafkaError):
    """``append`` (or a voter change) called on a node that is not the leader.

    Carries the leader hint so the caller can redirect: ``leader_id`` is ``None``
    when no leader is known in ``epoch``.
    """

    def __init__(self, leader_id: int | None, epoch: int) -> None:
        super().__init__(
            ErrorCode.NOT_LEADER_OR_FOLLOWER, f"leader is {leader_id} in epoch {epoch}"
        )
        self.leader_id = leader_id
        self.epoch = epoch


class RaftInvariantError(SamsaError):
    """A state that Raft's safety argument says cannot happen (a bug, or lost disk state)."""
