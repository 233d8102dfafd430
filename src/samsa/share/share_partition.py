"""One share partition: which records of a partition a share group has in flight.

Sans-I/O: the clock is passed in and the log is not read here; the caller
reads record batches and hands their offset spans to :meth:`acquire`.

The records between ``start_offset`` and ``end_offset`` are *in flight*, each
Available, Acquired (by one member, until its lock expires), Acknowledged or
Archived.  Records before ``start_offset`` are done; those from ``end_offset``
on have never been acquired.  An acquisition increments the record's delivery
count; a record released (explicitly or by its lock expiring) whose count has
reached ``group.share.delivery.count.limit`` is archived instead of offered
again, so a poison record is not redelivered forever.  The start offset moves
past every leading record that is acknowledged or archived, and the window
(``end_offset - start_offset``) never grows beyond
``group.share.partition.max.record.locks``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from samsa.errors import ErrorCode


class RecordState(IntEnum):
    """Kafka's RecordState ids, as ``__share_group_state`` stores them."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(IntEnum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4
    """KIP-1222 (ShareFetch/ShareAcknowledge v2): keep the records acquired, with
    their acquisition lock running for another lock duration from now."""


@dataclass(frozen=True, slots=True)
class ShareLimits:
    lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    max_in_flight: int = 2000


@dataclass(slots=True)
class InFlightRun:
    """Consecutive in-flight offsets sharing one state, delivery count, owner and
    lock (Kafka's InFlightBatch): a fetched batch is one run until an
    acknowledgement or a redelivery splits it."""

    first: int
    last: int
    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline_ms: int = 0

    @property
    def size(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True, slots=True)
class AcquiredRange:
    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True, slots=True)
class StateBatch:
    """A run of in-flight records with the same state and delivery count (Kafka's
    PersisterStateBatch); acquired records are persisted as Available."""

    first_offset: int
    last_offset: int
    delivery_state: RecordState
    delivery_count: int


class SharePartition:
    def __init__(self, start_offset: int, limits: ShareLimits) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.limits = limits
        self.runs: list[InFlightRun] = []
        """In-flight runs in offset order, within [start_offset, end_offset); offsets
        in between that no run covers were never in a read batch (compacted away)."""
        self._next_deadline: int | None = None
        self.state_epoch = 0
        self.leader_epoch = -1
        """The data partition's leader epoch this state was loaded under."""
        self.archived_total = 0
        """Records archived (rejected, or at the delivery limit) since this leader
        loaded the partition: what an operator looks at for poison records."""

    @property
    def next_deadline(self) -> int | None:
        """The earliest acquisition lock deadline, if any record is acquired."""
        return self._next_deadline

    # ------------------------------------------------------------ acquire

    def fetch_offset(self, now_ms: int) -> int:
        """Where to read the log from: the first record that could be acquired now."""
        self.expire(now_ms)
        for run in self.runs:
            if run.state is RecordState.AVAILABLE:
                return run.first
        return self.end_offset

    def acquire(
        self,
        member_id: str,
        batches: Iterable[tuple[int, int]],
        max_records: int,
        now_ms: int,
        *,
        record_limit: bool = False,
    ) -> list[AcquiredRange]:
        """Acquire for ``member_id`` what is acquirable in the read batches (first
        and last offsets): available runs and whole new batches until
        ``max_records`` is reached (Kafka aligns acquisitions with batches the same
        way, so a batch's records go to one consumer).  ``record_limit`` (KIP-1206's
        record-limit acquire mode) never acquires more than ``max_records``: the
        last new batch is cut there, its rest left for the next acquisition."""
        deadline = now_ms + self.limits.lock_duration_ms
        out: list[AcquiredRange] = []
        count = 0
        batches = list(batches)
        if not batches:
            return out
        low, high = max(batches[0][0], self.start_offset), batches[-1][1]
        # Redeliveries: available runs inside what was read.
        i = 0
        while i < len(self.runs) and count < max_records:
            run = self.runs[i]
            if run.last < low or run.state is not RecordState.AVAILABLE:
                i += 1
                continue
            if run.first > high:
                break
            take_last = min(run.last, high, run.first + (max_records - count) - 1)
            if take_last < run.last:
                self._split(i, take_last + 1)
            run = self.runs[i]
            self._lock(run, member_id, deadline)
            count += run.size
            out.append(AcquiredRange(run.first, run.last, run.delivery_count))
            i += 1
        # New records: whole batches from the end of the in-flight window.
        limit = self.start_offset + self.limits.max_in_flight
        for base, last in batches:
            if count >= max_records:
                break
            first = max(base, self.end_offset)
            if last < first:
                continue
            if first >= limit:
                break
            last = min(last, limit - 1)
            if record_limit:
                last = min(last, first + (max_records - count) - 1)
            run = InFlightRun(first, last, RecordState.AVAILABLE)
            self.runs.append(run)
            self.end_offset = last + 1
            self._lock(run, member_id, deadline)
            count += run.size
            _extend(out, first, last, 1)
        if out and (self._next_deadline is None or deadline < self._next_deadline):
            self._next_deadline = deadline
        out.sort(key=lambda r: r.first_offset)
        return out

    @staticmethod
    def _lock(run: InFlightRun, member_id: str, deadline: int) -> None:
        run.state = RecordState.ACQUIRED
        run.delivery_count += 1
        run.member_id = member_id
        run.lock_deadline_ms = deadline

    def _index(self, offset: int) -> int:
        """The index of the run holding ``offset``, or -1."""
        i = bisect.bisect_right(self.runs, offset, key=lambda r: r.first) - 1
        if i >= 0 and self.runs[i].last >= offset:
            return i
        return -1

    def _split(self, i: int, at: int) -> None:
        """Split run ``i`` so that ``at`` starts a run of its own."""
        run = self.runs[i]
        tail = InFlightRun(
            at, run.last, run.state, run.delivery_count, run.member_id, run.lock_deadline_ms
        )
        run.last = at - 1
        self.runs.insert(i + 1, tail)

    def _runs_between(self, first: int, last: int) -> list[InFlightRun] | None:
        """The runs covering exactly [first, last] (split at both ends), or None when
        an offset in it is not in flight."""
        i = self._index(first)
        if i < 0:
            return None
        if self.runs[i].first < first:
            self._split(i, first)
            i += 1
        out = []
        expected = first
        while expected <= last:
            if i >= len(self.runs) or self.runs[i].first != expected:
                return None
            run = self.runs[i]
            if run.last > last:
                self._split(i, last + 1)
            out.append(run)
            expected = run.last + 1
            i += 1
        return out

    # --------------------------------------------------------- acknowledge

    def acknowledge(
        self,
        member_id: str,
        batches: Sequence[tuple[int, int, Sequence[int]]],
        *,
        renew_at_ms: int | None = None,
    ) -> tuple[ErrorCode, str | None]:
        """Apply ``(first, last, types)`` acknowledgements of one member, all or none:
        every record must be acquired by that member (INVALID_RECORD_STATE
        otherwise); ``types`` holds one type for the whole range or one per record.
        RENEW is allowed only with ``renew_at_ms`` (the request's time, from which
        the renewed locks run; INVALID_REQUEST otherwise)."""
        plan: list[tuple[int, int, AcknowledgeType]] = []
        for first, last, types in batches:
            if last < first or (len(types) not in (1, last - first + 1)):
                return ErrorCode.INVALID_REQUEST, f"bad acknowledgement batch {first}-{last}"
            try:
                kinds = [AcknowledgeType(t) for t in types]
            except ValueError:
                return ErrorCode.INVALID_REQUEST, f"unknown acknowledge type in {first}-{last}"
            if renew_at_ms is None and AcknowledgeType.RENEW in kinds:
                return (
                    ErrorCode.INVALID_REQUEST,
                    f"renew acknowledgement not allowed in {first}-{last}",
                )
            if len(kinds) == 1:
                plan.append((first, last, kinds[0]))
                continue
            run_start = first
            for offset in range(first + 1, last + 2):
                if offset > last or kinds[offset - first] is not kinds[run_start - first]:
                    plan.append((run_start, offset - 1, kinds[run_start - first]))
                    run_start = offset
        resolved: list[tuple[list[InFlightRun], AcknowledgeType]] = []
        for first, last, kind in plan:
            runs = self._runs_between(first, last)
            bad = next(
                (
                    r.first
                    for r in runs or ()
                    if r.state is not RecordState.ACQUIRED or r.member_id != member_id
                ),
                None,
            )
            if runs is None or bad is not None:
                where = first if bad is None else bad
                return (
                    ErrorCode.INVALID_RECORD_STATE,
                    f"record {where} is not acquired by member {member_id}",
                )
            resolved.append((runs, kind))
        for runs, kind in resolved:
            for run in runs:
                if kind is AcknowledgeType.ACCEPT:
                    self._finish(run, RecordState.ACKNOWLEDGED)
                elif kind is AcknowledgeType.RELEASE:
                    self._release(run)
                elif kind is AcknowledgeType.RENEW:
                    assert renew_at_ms is not None
                    self._renew(run, renew_at_ms + self.limits.lock_duration_ms)
                else:  # REJECT, GAP
                    self._finish(run, RecordState.ARCHIVED)
        self._advance()
        return ErrorCode.NONE, None

    def _renew(self, run: InFlightRun, deadline: int) -> None:
        run.lock_deadline_ms = deadline
        if self._next_deadline is None or deadline < self._next_deadline:
            self._next_deadline = deadline

    def release_member(self, member_id: str) -> int:
        """A member's share session closed: its acquired records are offered again."""
        released = 0
        for run in self.runs:
            if run.state is RecordState.ACQUIRED and run.member_id == member_id:
                self._release(run)
                released += run.size
        self._advance()
        return released

    def expire(self, now_ms: int) -> int:
        """Release every record whose acquisition lock ran out by ``now_ms``."""
        if self._next_deadline is None or now_ms < self._next_deadline:
            return 0
        expired = 0
        next_deadline: int | None = None
        for run in self.runs:
            if run.state is not RecordState.ACQUIRED:
                continue
            if run.lock_deadline_ms <= now_ms:
                self._release(run)
                expired += run.size
            elif next_deadline is None or run.lock_deadline_ms < next_deadline:
                next_deadline = run.lock_deadline_ms
        self._next_deadline = next_deadline
        self._advance()
        return expired

    def _release(self, run: InFlightRun) -> None:
        if run.delivery_count >= self.limits.delivery_count_limit:
            self._finish(run, RecordState.ARCHIVED)
        else:
            self._finish(run, RecordState.AVAILABLE)

    def _finish(self, run: InFlightRun, state: RecordState) -> None:
        if state is RecordState.ARCHIVED:
            self.archived_total += run.size
        run.state = state
        run.member_id = None
        run.lock_deadline_ms = 0

    def _advance(self) -> None:
        """Move the start offset past leading runs that are done."""
        runs = self.runs
        done = 0
        start = self.start_offset
        for run in runs:
            if run.state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                start = run.first
                break
            done += 1
        else:
            start = self.end_offset
        if done:
            del runs[:done]
        self.start_offset = max(self.start_offset, start)

    # ------------------------------------------------------------- state

    def has_acquired(self) -> bool:
        return any(run.state is RecordState.ACQUIRED for run in self.runs)

    def counts(self) -> dict[RecordState, int]:
        out = dict.fromkeys(RecordState, 0)
        for run in self.runs:
            out[run.state] += run.size
        return out

    def state_batches(self) -> list[StateBatch]:
        """The in-flight runs, acquired ones as Available: what a new leader must
        know so that it redelivers nothing already acknowledged."""
        out: list[StateBatch] = []
        for run in self.runs:
            state = RecordState.AVAILABLE if run.state is RecordState.ACQUIRED else run.state
            last = out[-1] if out else None
            if (
                last is not None
                and last.last_offset == run.first - 1
                and last.delivery_state is state
                and last.delivery_count == run.delivery_count
            ):
                out[-1] = StateBatch(last.first_offset, run.last, state, run.delivery_count)
            else:
                out.append(StateBatch(run.first, run.last, state, run.delivery_count))
        return out

    def restore(self, start_offset: int, batches: Iterable[StateBatch]) -> None:
        """Replace the state with a persisted snapshot (a new leader taking over)."""
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.runs = []
        self._next_deadline = None
        for batch in batches:
            first = max(batch.first_offset, start_offset)
            if batch.last_offset < first:
                continue
            self.runs.append(
                InFlightRun(first, batch.last_offset, batch.delivery_state, batch.delivery_count)
            )
            self.end_offset = max(self.end_offset, batch.last_offset + 1)
        self._advance()


def _extend(out: list[AcquiredRange], first: int, last: int, delivery_count: int) -> None:
    prev = out[-1] if out else None
    if prev is not None and prev.last_offset == first - 1 and prev.delivery_count == delivery_count:
        out[-1] = AcquiredRange(prev.first_offset, last, delivery_count)
    else:
        out.append(AcquiredRange(first, last, delivery_count))
