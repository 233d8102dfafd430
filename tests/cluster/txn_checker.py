"""Proof that a consume-transform-produce loop was exactly once through its faults.

A pure function over what the test collects once the faults are over (and
unit-tested on doctored histories in test_txn_checker.py):

* the input topic's size per partition;
* the output topic read with ``read_committed`` and with ``read_uncommitted``,
  each value as ``txn_worker.output_value`` wrote it: the input it stands for,
  the transaction (instance, number, size) and the offset that transaction
  committed for the input partition;
* the group's committed offsets;
* the transactions the workers saw commit, and those that must never commit
  (aborted by the worker, or open in an instance that was fenced or timed out).

It finds:

* missing / duplicated -- an input with no committed output, or more than one;
* partial -- a transaction whose committed outputs are not all of its outputs;
* aborted visible -- a committed output of a transaction that must never commit;
* lost commit -- a transaction a worker saw commit that left no output;
* offsets off -- per partition, the committed transactions in log order must
  each cover exactly the inputs from the previous one's committed offset to
  their own, and the group's offset must be the last one's: the offsets were
  committed exactly with their outputs, neither ahead (a gap) nor behind (a
  repeat).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Output", "TxnId", "TxnReport", "check_transactions", "parse_output"]

TxnId = tuple[str, int]
"""(worker instance, transaction number within it)."""


@dataclass(frozen=True, slots=True)
class Output:
    partition: int
    input_offset: int
    txn: TxnId
    size: int
    commit: int
    """The offset the transaction committed for ``partition``."""


def parse_output(value: bytes) -> Output:
    """The fields of ``txn_worker.output_value``."""
    source, txn, commit = value.decode().split("|")
    partition, offset = source.split(":")
    instance, number, size = txn.rsplit(":", 2)
    return Output(int(partition), int(offset), (instance, int(number)), int(size), int(commit))


@dataclass
class TxnReport:
    inputs: int = 0
    outputs_committed: int = 0
    outputs_aborted: int = 0
    """Outputs readable with read_uncommitted and hidden from read_committed."""
    transactions_committed: int = 0
    transactions_aborted: int = 0
    missing: list[tuple[int, int]] = field(default_factory=list)
    duplicated: list[tuple[int, int]] = field(default_factory=list)
    partial: list[TxnId] = field(default_factory=list)
    aborted_visible: list[TxnId] = field(default_factory=list)
    lost_commits: list[TxnId] = field(default_factory=list)
    offsets_off: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems()

    def problems(self) -> list[str]:
        found = {
            "inputs without a committed output": self.missing,
            "inputs with more than one committed output": self.duplicated,
            "transactions partly visible": self.partial,
            "aborted transactions visible to read_committed": self.aborted_visible,
            "commits acknowledged but not in the log": self.lost_commits,
            "offsets not committed exactly with their outputs": self.offsets_off,
        }
        return [f"{what}: {items[:10]}" for what, items in found.items() if items]

    def summary(self) -> str:
        return (
            f"inputs: {self.inputs}, outputs committed: {self.outputs_committed} "
            f"in {self.transactions_committed} transactions, aborted outputs hidden from "
            f"read_committed: {self.outputs_aborted} in {self.transactions_aborted} transactions"
        )


def check_transactions(
    input_sizes: Mapping[int, int],
    committed_reads: Sequence[tuple[int, bytes]],
    uncommitted_reads: Sequence[tuple[int, bytes]],
    group_offsets: Mapping[int, int],
    acknowledged: Iterable[TxnId],
    never_committed: Iterable[TxnId],
) -> TxnReport:
    """``*_reads``: (output offset, value) of every output, in log order of each
    partition (partitions one after the other)."""
    report = TxnReport(inputs=sum(input_sizes.values()))
    committed = [parse_output(v) for _, v in committed_reads]
    everything = [parse_output(v) for _, v in uncommitted_reads]
    report.outputs_committed = len(committed)
    report.outputs_aborted = len(everything) - len(set(everything) & set(committed))

    per_input = Counter((o.partition, o.input_offset) for o in committed)
    for partition, size in sorted(input_sizes.items()):
        for offset in range(size):
            seen = per_input[(partition, offset)]
            if seen == 0:
                report.missing.append((partition, offset))
            elif seen > 1:
                report.duplicated.append((partition, offset))

    visible = Counter(o.txn for o in committed)
    sizes = {o.txn: o.size for o in everything}
    report.transactions_committed = len(visible)
    report.transactions_aborted = len(set(sizes) - set(visible))
    report.partial = sorted(t for t, n in visible.items() if n != sizes.get(t, n))
    report.aborted_visible = sorted(set(never_committed) & set(visible))
    report.lost_commits = sorted(set(acknowledged) - set(visible))
    report.offsets_off = _offsets_off(committed, input_sizes, group_offsets)
    return report


def _offsets_off(
    committed: Sequence[Output], input_sizes: Mapping[int, int], group_offsets: Mapping[int, int]
) -> list[str]:
    runs: dict[int, list[tuple[TxnId, list[Output]]]] = defaultdict(list)
    for o in committed:
        partition_runs = runs[o.partition]
        if not partition_runs or partition_runs[-1][0] != o.txn:
            partition_runs.append((o.txn, []))
        partition_runs[-1][1].append(o)
    problems: list[str] = []
    for partition in sorted(input_sizes):
        previous = 0
        for txn, outputs in runs[partition]:
            inputs = [o.input_offset for o in outputs]
            commits = {o.commit for o in outputs}
            if inputs != list(range(previous, previous + len(inputs))) or commits != {
                previous + len(inputs)
            }:
                problems.append(
                    f"partition {partition}: {txn} holds inputs {inputs[:5]}.. committing "
                    f"{sorted(commits)} after offset {previous}"
                )
            previous = max(commits)
        if group_offsets.get(partition, 0) != previous:
            problems.append(
                f"partition {partition}: group offset {group_offsets.get(partition)}, "
                f"last committed transaction stored {previous}"
            )
    return problems
