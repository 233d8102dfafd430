"""What a partition leader knows of one follower: Kafka's ``Replica`` state.

The leader learns a follower's log end offset only from its Fetch requests
(the fetch offset is everything the follower has), so this is updated once
per follower fetch and read by the high watermark and ISR rules.

``last_caught_up_time_ms`` is Kafka's ``lastCaughtUpTimeMs``: the last time the
follower was known to hold everything the leader had.  A fetch that reaches
the leader's end offset proves it for now; a fetch that reaches the end
offset the leader had at the *previous* fetch proves it for the time of that
previous fetch.  A follower whose proof is older than ``replica.lag.time.max.ms``
is out of sync, whether it is stuck (no fetches) or slow (fetches that never
catch up).

Owned by the event loop (one mutable object per follower; nothing else
writes it).  Offsets are -1 until the first fetch after a leader change.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["UNKNOWN_OFFSET", "ReplicaState"]

UNKNOWN_OFFSET = -1


@dataclass(slots=True)
class ReplicaState:
    broker_id: int
    log_start_offset: int = UNKNOWN_OFFSET
    log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_time_ms: int = 0
    last_caught_up_time_ms: int = 0

    def update_fetch_state(
        self,
        fetch_offset: int,
        log_start_offset: int,
        fetch_time_ms: int,
        leader_end_offset: int,
    ) -> None:
        """Record a follower fetch at ``fetch_offset`` while the leader's log
        ended at ``leader_end_offset`` (read before the fetch, so appends racing
        the fetch never keep a follower out of sync)."""
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, fetch_time_ms)
        elif fetch_offset >= self.last_fetch_leader_log_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, self.last_fetch_time_ms)
        self.log_start_offset = log_start_offset
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_log_end_offset = leader_end_offset
        self.last_fetch_time_ms = fetch_time_ms

    def prove_caught_up(self, fetch_time_ms: int) -> None:
        """A fetch at ``fetch_time_ms`` that skipped this partition (a fetch session
        reads only what changed) found the follower still at the log end it had
        reached: the same proof as ``update_fetch_state`` at the end offset."""
        self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, fetch_time_ms)
        self.last_fetch_time_ms = max(self.last_fetch_time_ms, fetch_time_ms)

    def reset(
        self, now_ms: int, leader_end_offset: int, *, is_new_leader: bool, in_sync: bool
    ) -> None:
        """A new leader epoch starts.  A follower the controller says is in sync
        gets a full ``replica.lag.time.max.ms`` from now to prove it; one that is
        not starts with no proof.  A broker that just became leader knows
        nothing of the followers' logs yet."""
        self.last_caught_up_time_ms = now_ms if in_sync else 0
        if is_new_leader:
            self.log_start_offset = UNKNOWN_OFFSET
            self.log_end_offset = UNKNOWN_OFFSET
            self.last_fetch_leader_log_end_offset = UNKNOWN_OFFSET
            self.last_fetch_time_ms = 0
        else:
            self.last_fetch_leader_log_end_offset = leader_end_offset
            self.last_fetch_time_ms = now_ms

    def is_caught_up(self, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        """Kafka's ``isCaughtUp``: level with the leader, or was within the lag."""
        return (
            leader_end_offset == self.log_end_offset
            or now_ms - self.last_caught_up_time_ms <= max_lag_ms
        )
