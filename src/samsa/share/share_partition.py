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


@dataclass(frozen=True, slots=True)
class ShareLimits:
    lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    max_in_flight: int = 2000


@dataclass(slots=True)
class InFlightRecord:
    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline_ms: int = 0


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
        self.records: dict[int, InFlightRecord] = {}
        self._next_deadline: int | None = None
        self.state_epoch = 0
        self.leader_epoch = -1
        """The data partition's leader epoch this state was loaded under."""

    @property
    def next_deadline(self) -> int | None:
        """The earliest acquisition lock deadline, if any record is acquired."""
        return self._next_deadline

    # ------------------------------------------------------------ acquire

    def fetch_offset(self, now_ms: int) -> int:
        """Where to read the log from: the first record that could be acquired now."""
        self.expire(now_ms)
        available = [o for o, r in self.records.items() if r.state is RecordState.AVAILABLE]
        return min(available) if available else self.end_offset

    def acquire(
        self,
        member_id: str,
        batches: Iterable[tuple[int, int]],
        max_records: int,
        now_ms: int,
    ) -> list[AcquiredRange]:
        """Acquire for ``member_id`` what is acquirable in the read batches (first
        and last offsets): redeliveries record by record, new records whole batches
        at a time until ``max_records`` is reached (Kafka aligns acquisitions with
        batches the same way, so a batch's records go to one consumer)."""
        deadline = now_ms + self.limits.lock_duration_ms
        out: list[AcquiredRange] = []
        count = 0
        for base, last in batches:
            if count >= max_records:
                break
            for offset in range(max(base, self.start_offset), last + 1):
                record = self.records.get(offset)
                if offset < self.end_offset:
                    if record is None or record.state is not RecordState.AVAILABLE:
                        continue
                    if count >= max_records:
                        break
                else:
                    if offset - self.start_offset >= self.limits.max_in_flight:
                        return self._acquired(out, deadline)
                    record = InFlightRecord(RecordState.AVAILABLE)
                    self.records[offset] = record
                    self.end_offset = offset + 1
                record.state = RecordState.ACQUIRED
                record.delivery_count += 1
                record.member_id = member_id
                record.lock_deadline_ms = deadline
                count += 1
                _extend(out, offset, record.delivery_count)
        return self._acquired(out, deadline)

    def _acquired(self, out: list[AcquiredRange], deadline: int) -> list[AcquiredRange]:
        if out and (self._next_deadline is None or deadline < self._next_deadline):
            self._next_deadline = deadline
        return out

    # --------------------------------------------------------- acknowledge

    def acknowledge(
        self, member_id: str, batches: Sequence[tuple[int, int, Sequence[int]]]
    ) -> tuple[ErrorCode, str | None]:
        """Apply ``(first, last, types)`` acknowledgements of one member, all or none:
        every record must be acquired by that member (INVALID_RECORD_STATE
        otherwise); ``types`` holds one type for the whole range or one per record."""
        plan: list[tuple[InFlightRecord, AcknowledgeType]] = []
        for first, last, types in batches:
            if last < first or (len(types) not in (1, last - first + 1)):
                return ErrorCode.INVALID_REQUEST, f"bad acknowledgement batch {first}-{last}"
            for i, offset in enumerate(range(first, last + 1)):
                try:
                    kind = AcknowledgeType(types[0] if len(types) == 1 else types[i])
                except ValueError:
                    return ErrorCode.INVALID_REQUEST, f"unknown acknowledge type at {offset}"
                record = self.records.get(offset)
                if (
                    record is None
                    or record.state is not RecordState.ACQUIRED
                    or record.member_id != member_id
                ):
                    return (
                        ErrorCode.INVALID_RECORD_STATE,
                        f"record {offset} is not acquired by member {member_id}",
                    )
                plan.append((record, kind))
        for record, kind in plan:
            if kind is AcknowledgeType.ACCEPT:
                self._finish(record, RecordState.ACKNOWLEDGED)
            elif kind is AcknowledgeType.RELEASE:
                self._release(record)
            else:  # REJECT, GAP
                self._finish(record, RecordState.ARCHIVED)
        self._advance()
        return ErrorCode.NONE, None

    def release_member(self, member_id: str) -> int:
        """A member's share session closed: its acquired records are offered again."""
        released = 0
        for record in self.records.values():
            if record.state is RecordState.ACQUIRED and record.member_id == member_id:
                self._release(record)
                released += 1
        self._advance()
        return released

    def expire(self, now_ms: int) -> int:
        """Release every record whose acquisition lock ran out by ``now_ms``."""
        if self._next_deadline is None or now_ms < self._next_deadline:
            return 0
        expired = 0
        next_deadline: int | None = None
        for record in self.records.values():
            if record.state is not RecordState.ACQUIRED:
                continue
            if record.lock_deadline_ms <= now_ms:
                self._release(record)
                expired += 1
            elif next_deadline is None or record.lock_deadline_ms < next_deadline:
                next_deadline = record.lock_deadline_ms
        self._next_deadline = next_deadline
        self._advance()
        return expired

    def _release(self, record: InFlightRecord) -> None:
        if record.delivery_count >= self.limits.delivery_count_limit:
            self._finish(record, RecordState.ARCHIVED)
        else:
            self._finish(record, RecordState.AVAILABLE)

    @staticmethod
    def _finish(record: InFlightRecord, state: RecordState) -> None:
        record.state = state
        record.member_id = None
        record.lock_deadline_ms = 0

    def _advance(self) -> None:
        """Move the start offset past leading records that are done."""
        start, records = self.start_offset, self.records
        while start < self.end_offset:
            record = records.get(start)
            if record is not None and record.state not in (
                RecordState.ACKNOWLEDGED,
                RecordState.ARCHIVED,
            ):
                break
            records.pop(start, None)
            start += 1
        self.start_offset = start

    # ------------------------------------------------------------- state

    def counts(self) -> dict[RecordState, int]:
        out = dict.fromkeys(RecordState, 0)
        for record in self.records.values():
            out[record.state] += 1
        return out

    def state_batches(self) -> list[StateBatch]:
        """The in-flight records as runs, acquired ones as Available: what a new
        leader must know so that it redelivers nothing already acknowledged."""
        out: list[StateBatch] = []
        for offset in sorted(self.records):
            record = self.records[offset]
            state = RecordState.AVAILABLE if record.state is RecordState.ACQUIRED else record.state
            last = out[-1] if out else None
            if (
                last is not None
                and last.last_offset == offset - 1
                and last.delivery_state is state
                and last.delivery_count == record.delivery_count
            ):
                out[-1] = StateBatch(last.first_offset, offset, state, record.delivery_count)
            else:
                out.append(StateBatch(offset, offset, state, record.delivery_count))
        return out

    def restore(self, start_offset: int, batches: Iterable[StateBatch]) -> None:
        """Replace the state with a persisted snapshot (a new leader taking over)."""
        self.start_offset = start_offset
        self.records = {}
        self.end_offset = start_offset
        self._next_deadline = None
        for batch in batches:
            for offset in range(max(batch.first_offset, start_offset), batch.last_offset + 1):
                self.records[offset] = InFlightRecord(batch.delivery_state, batch.delivery_count)
                self.end_offset = max(self.end_offset, offset + 1)
        self._advance()


def _extend(out: list[AcquiredRange], offset: int, delivery_count: int) -> None:
    last = out[-1] if out else None
    if (
        last is not None
        and last.last_offset == offset - 1
        and last.delivery_count == delivery_count
    ):
        out[-1] = AcquiredRange(last.first_offset, offset, delivery_count)
    else:
        out.append(AcquiredRange(offset, offset, delivery_count))
