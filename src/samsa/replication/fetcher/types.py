"""The values a replica fetcher works with: partition fetch states, actions, request plans.

Kept apart from the decisions (fetcher_state) so the simulator, the asyncio
driver and the ReplicaManager share them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from samsa.errors import ErrorCode
from samsa.storage.leader_epoch_cache import EpochEndOffset

__all__ = [
    "FETCH_API_KEY",
    "FETCH_VERSION",
    "OFFSET_FOR_LEADER_EPOCH_API_KEY",
    "OFFSET_FOR_LEADER_EPOCH_VERSION",
    "AppendRecords",
    "BuildRemoteLogAuxState",
    "EpochPlan",
    "FailPartition",
    "FetchPlan",
    "FetchStatus",
    "FetcherAction",
    "FollowerLogs",
    "InitialFetchState",
    "PartitionFetchState",
    "TopicPartition",
    "TruncateFullyAndStartAt",
    "TruncateTo",
]

TopicPartition = tuple[str, int]

FETCH_API_KEY = 1
FETCH_VERSION = 12
OFFSET_FOR_LEADER_EPOCH_API_KEY = 23
OFFSET_FOR_LEADER_EPOCH_VERSION = 4


class FetchStatus(Enum):
    FETCHING = "fetching"
    TRUNCATING = "truncating"
    FAILED = "failed"


class FollowerLogs(Protocol):
    """What the decisions read of the local follower logs."""

    def log_end_offset(self, tp: TopicPartition) -> int: ...

    def log_start_offset(self, tp: TopicPartition) -> int: ...

    def last_fetched_epoch(self, tp: TopicPartition) -> int:
        """Epoch of the last batch, -1 when the log is empty or has no epochs."""
        ...

    def end_offset_for_epoch(self, tp: TopicPartition, epoch: int) -> EpochEndOffset: ...


@dataclass(frozen=True, slots=True)
class InitialFetchState:
    """Where a partition starts fetching from a new leader (or leader epoch).
    ``high_watermark`` is where a log without epochs truncates first."""

    leader_id: int
    current_leader_epoch: int
    high_watermark: int


@dataclass(slots=True)
class PartitionFetchState:
    current_leader_epoch: int
    status: FetchStatus
    truncation_offset: int
    delayed_until_ms: int = 0
    lag: int = -1
    leader_behind_retries: int = 0  # errors in a row saying the leader lags on metadata

    def ready(self, now_ms: int) -> bool:
        return self.delayed_until_ms <= now_ms


# ---------------------------------------------------------------------- actions
@dataclass(frozen=True, slots=True)
class AppendRecords:
    """Append the fetched ``records`` (may be empty) and take the leader's offsets."""

    tp: TopicPartition
    records: bytes | memoryview
    leader_high_watermark: int
    leader_log_start_offset: int


@dataclass(frozen=True, slots=True)
class TruncateTo:
    tp: TopicPartition
    offset: int


@dataclass(frozen=True, slots=True)
class TruncateFullyAndStartAt:
    tp: TopicPartition
    offset: int


@dataclass(frozen=True, slots=True)
class FailPartition:
    """Stop fetching the partition until new metadata re-adds it."""

    tp: TopicPartition
    error: ErrorCode


@dataclass(frozen=True, slots=True)
class BuildRemoteLogAuxState:
    """The leader's local log starts past this follower's fetch offset and the
    remote tier holds the rest (OFFSET_MOVED_TO_TIERED_STORAGE): rebuild the
    state at the leader's local log start from the remote tier and fetch on
    from there (Kafka's TierStateMachine)."""

    tp: TopicPartition
    leader_log_start_offset: int
    current_leader_epoch: int


FetcherAction = (
    AppendRecords | TruncateTo | TruncateFullyAndStartAt | FailPartition | BuildRemoteLogAuxState
)


@dataclass(frozen=True, slots=True)
class FetchPlan:
    """A Fetch request body and, per partition, (fetch offset, leader epoch) sent."""

    body: dict[str, Any]
    sent: dict[TopicPartition, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class EpochPlan:
    """An OffsetForLeaderEpoch request body and, per partition, (epoch asked,
    current leader epoch) sent."""

    body: dict[str, Any]
    sent: dict[TopicPartition, tuple[int, int]]
