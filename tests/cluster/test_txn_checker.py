"""The transaction checker on doctored histories: each fault it exists to find."""

from __future__ import annotations

from tests.cluster.txn_checker import TxnId, check_transactions, parse_output
from tests.cluster.txn_worker import output_value

Reads = list[tuple[int, bytes]]


def txn(instance: str, number: int, partition: int, inputs: range) -> Reads:
    """The outputs one transaction writes for ``inputs`` of ``partition``."""
    return [
        (0, output_value(partition, i, instance, number, len(inputs), inputs.stop)) for i in inputs
    ]


def check(committed: Reads, uncommitted: Reads | None = None, **kwargs: object) -> list[str]:
    args: dict[str, object] = {
        "input_sizes": {0: 6},
        "group_offsets": {0: 6},
        "acknowledged": set(),
        "never_committed": set(),
        **kwargs,
    }
    return check_transactions(
        committed_reads=committed,
        uncommitted_reads=committed if uncommitted is None else uncommitted,
        **args,  # type: ignore[arg-type]
    ).problems()


def test_output_value_round_trips() -> None:
    out = parse_output(output_value(2, 17, "w1", 4, 8, 18))
    assert (out.partition, out.input_offset, out.txn, out.size, out.commit) == (
        2,
        17,
        ("w1", 4),
        8,
        18,
    )


def test_a_clean_history_passes_and_counts_the_aborted() -> None:
    good = txn("w1", 1, 0, range(0, 3)) + txn("w1", 3, 0, range(3, 6))
    aborted = txn("w1", 2, 0, range(3, 6))
    report = check_transactions(
        {0: 6}, good, good[:3] + aborted + good[3:], {0: 6}, {("w1", 1), ("w1", 3)}, set()
    )
    assert report.ok, report.problems()
    assert (report.outputs_committed, report.outputs_aborted) == (6, 3)
    assert (report.transactions_committed, report.transactions_aborted) == (2, 1)


def test_a_missing_and_a_duplicated_input_are_found() -> None:
    problems = check(txn("w1", 1, 0, range(0, 3)) + txn("w2", 1, 0, range(2, 5)))
    assert any("without a committed output" in p and "(0, 5)" in p for p in problems)
    assert any("more than one" in p and "(0, 2)" in p for p in problems)


def test_a_partly_visible_transaction_is_found() -> None:
    whole = txn("w1", 1, 0, range(0, 6))
    problems = check(whole[:4], whole)
    assert any("partly visible" in p for p in problems)


def test_an_aborted_transaction_visible_to_read_committed_is_found() -> None:
    zombie: TxnId = ("w1", 1)
    problems = check(txn("w1", 1, 0, range(0, 6)), never_committed={zombie})
    assert any("aborted transactions visible" in p for p in problems)


def test_an_acknowledged_commit_missing_from_the_log_is_found() -> None:
    problems = check(txn("w1", 1, 0, range(0, 6)), acknowledged={("w1", 2)})
    assert any("acknowledged but not in the log" in p for p in problems)


def test_offsets_ahead_of_or_behind_their_outputs_are_found() -> None:
    ahead = [(0, output_value(0, i, "w1", 1, 3, 4)) for i in range(3)]
    assert any("offsets not committed exactly" in p for p in check(ahead, input_sizes={0: 3}))
    outputs = txn("w1", 1, 0, range(0, 6))
    assert any("group offset 4" in p for p in check(outputs, group_offsets={0: 4}))
