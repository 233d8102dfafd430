"""Proof that a replicated topic kept every acknowledged record, in order, once.

A fault test is only as good as what it checks afterwards, so the check is a
pure function over three histories the test collects, with no broker in sight
(and unit-tested on doctored histories in test_checker.py):

* the producers' acknowledgements (``Ack``): which record (producer, sequence)
  the cluster confirmed, on which partition, at which offset -- the offset is
  -1 when the client was told "duplicate" and so never learnt it;
* the final log (``FinalLog``): every partition read from offset 0 to its
  high watermark once the cluster is healthy again;
* what consumers saw while the faults ran (``Seen``).

It finds:

* lost -- an acknowledged record that is not in its partition's final log;
* misplaced -- acknowledged at one offset, but the final log holds something
  else there (the record survived elsewhere, so the acknowledgement lied);
* duplicates -- a record written more than once (the producers are
  idempotent, so a retry must never write twice);
* reordered -- per producer and partition, the log order differs from the
  send order (sequence numbers) or from the order acknowledgements arrived;
* phantom reads -- a consumer saw (offset, value) that the final log does not
  hold at that offset: the record was readable, then truncated away, which a
  high watermark must prevent;
* foreign -- a record whose value is not one the producers write.

Record values carry their identity (``encode_value``), so the final log alone
tells which record sits where.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "Ack",
    "CheckReport",
    "FinalLog",
    "RecordId",
    "Seen",
    "check",
    "decode_value",
    "encode_value",
]

RecordId = tuple[str, int]
"""(producer name, sequence number): unique per record a test produces."""

FinalLog = Mapping[int, Sequence[tuple[int, bytes]]]
"""partition -> [(offset, value)] in offset order, read from offset 0."""

_MAGIC = b"samsa-check"
_PAD = b"." * 64


def encode_value(producer: str, seq: int, pad: int = 0) -> bytes:
    """The value of record ``seq`` of ``producer``: its identity, then ``pad`` filler
    bytes (so a test can choose a record size)."""
    if ":" in producer:
        raise ValueError(f"producer name {producer!r} must not contain ':'")
    head = b"%s:%s:%d:" % (_MAGIC, producer.encode(), seq)
    return head + (_PAD * (pad // len(_PAD) + 1))[:pad]


def decode_value(value: bytes | None) -> RecordId | None:
    """The identity ``encode_value`` wrote, or None for any other value."""
    if not value:
        return None
    parts = bytes(value).split(b":", 3)
    if len(parts) != 4 or parts[0] != _MAGIC:
        return None
    try:
        return parts[1].decode(), int(parts[2])
    except (UnicodeDecodeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class Ack:
    """A record the cluster acknowledged to its producer (acks=all)."""

    producer: str
    seq: int
    partition: int
    offset: int
    """-1: acknowledged without an offset (a DUPLICATE_SEQUENCE_NUMBER answer)."""
    order: int = -1
    """Position in the order this producer's acknowledgements arrived (-1: not kept)."""

    @property
    def record(self) -> RecordId:
        return self.producer, self.seq


@dataclass(frozen=True, slots=True)
class Seen:
    """A record a consumer received during the run."""

    partition: int
    offset: int
    value: bytes
    consumer: str = ""


@dataclass
class CheckReport:
    """What ``check`` found; ``problems()`` is empty when everything held."""

    acknowledged: int = 0
    records_in_log: int = 0
    reads_checked: int = 0
    lost: list[Ack] = field(default_factory=list)
    misplaced: list[tuple[Ack, bytes | None]] = field(default_factory=list)
    """(ack, the value the final log holds at the acked offset; None: no record there)."""
    duplicates: dict[RecordId, list[tuple[int, int]]] = field(default_factory=dict)
    """record -> every (partition, offset) it occupies, when more than one."""
    reordered: list[str] = field(default_factory=list)
    phantom_reads: list[tuple[Seen, bytes | None]] = field(default_factory=list)
    """(what a consumer saw, what the final log holds at that offset; None: nothing)."""
    foreign: list[tuple[int, int, bytes]] = field(default_factory=list)
    bad_log: list[str] = field(default_factory=list)
    """The final log itself is malformed (offsets not increasing)."""

    @property
    def ok(self) -> bool:
        return not self.problems()

    def problems(self, limit: int = 5) -> list[str]:
        """One line per kind of problem found, with up to ``limit`` examples each."""
        out: list[str] = []

        def add(kind: str, items: Sequence[object]) -> None:
            if items:
                shown = ", ".join(repr(item) for item in items[:limit])
                more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
                out.append(f"{len(items)} {kind}: {shown}{more}")

        add("lost acknowledged records", self.lost)
        add("acknowledged at an offset holding something else", self.misplaced)
        add("duplicated records", list(self.duplicates.items()))
        add("reorderings", self.reordered)
        add("phantom reads (seen by a consumer, not in the final log)", self.phantom_reads)
        add("foreign records", self.foreign)
        add("malformed final log", self.bad_log)
        return out

    def summary(self) -> str:
        return (
            f"acknowledged={self.acknowledged} in_log={self.records_in_log} "
            f"reads_checked={self.reads_checked} lost={len(self.lost)} "
            f"misplaced={len(self.misplaced)} duplicates={len(self.duplicates)} "
            f"reordered={len(self.reordered)} phantom_reads={len(self.phantom_reads)} "
            f"foreign={len(self.foreign)}"
        )


def check(acks: Iterable[Ack], final_log: FinalLog, seen: Iterable[Seen] = ()) -> CheckReport:
    """Check the histories of one run; see the module docstring for what is found."""
    report = CheckReport()
    by_offset: dict[int, dict[int, bytes]] = {}
    where: defaultdict[RecordId, list[tuple[int, int]]] = defaultdict(list)
    for partition, records in sorted(final_log.items()):
        offsets: dict[int, bytes] = {}
        previous = -1
        for offset, value in records:
            if offset <= previous:
                report.bad_log.append(f"partition {partition}: offset {offset} after {previous}")
            previous = offset
            offsets[offset] = value
            report.records_in_log += 1
            record = decode_value(value)
            if record is None:
                report.foreign.append((partition, offset, value))
            else:
                where[record].append((partition, offset))
        by_offset[partition] = offsets
    report.duplicates = {record: places for record, places in where.items() if len(places) > 1}

    # partition -> producer -> [(seq, ack order, final offset)] of acknowledged records
    placed: defaultdict[tuple[int, str], list[tuple[int, int, int]]] = defaultdict(list)
    for ack in acks:
        report.acknowledged += 1
        in_partition = [o for p, o in where.get(ack.record, ()) if p == ack.partition]
        if not in_partition:
            report.lost.append(ack)
            continue
        if ack.offset >= 0 and ack.offset not in in_partition:
            held = by_offset.get(ack.partition, {}).get(ack.offset)
            report.misplaced.append((ack, held))
        offset = ack.offset if ack.offset in in_partition else min(in_partition)
        placed[(ack.partition, ack.producer)].append((ack.seq, ack.order, offset))

    for (partition, producer), entries in sorted(placed.items()):
        report.reordered.extend(_order_violations(partition, producer, entries))

    for read in seen:
        report.reads_checked += 1
        held = by_offset.get(read.partition, {}).get(read.offset)
        if held != read.value:
            report.phantom_reads.append((read, held))
    return report


def _order_violations(
    partition: int, producer: str, entries: list[tuple[int, int, int]]
) -> list[str]:
    """Send order (sequence) and acknowledgement order must both be log order."""
    out: list[str] = []
    by_seq = sorted(entries)
    for (seq_a, _, off_a), (seq_b, _, off_b) in itertools.pairwise(by_seq):
        if off_b <= off_a:
            out.append(
                f"{producer} on partition {partition}: seq {seq_a} at offset {off_a} but "
                f"later seq {seq_b} at offset {off_b}"
            )
    by_ack = sorted((order, offset, seq) for seq, order, offset in entries if order >= 0)
    for (ord_a, off_a, seq_a), (ord_b, off_b, seq_b) in itertools.pairwise(by_ack):
        if off_b <= off_a:
            out.append(
                f"{producer} on partition {partition}: ack #{ord_a} (seq {seq_a}) at offset "
                f"{off_a} but later ack #{ord_b} (seq {seq_b}) at offset {off_b}"
            )
    return out
