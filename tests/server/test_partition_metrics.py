"""The per-partition /metrics families, written without prometheus_client's
families: still valid exposition text, same names, labels and values."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from samsa.server.observability.partition_metrics import PartitionSample, partition_family_pieces


def render_partition_families(rows: list[PartitionSample]) -> bytes:
    """The whole text, as a scrape joins it."""
    return "".join(partition_family_pieces(rows)).encode()


def test_families_parse_with_the_values_of_each_partition() -> None:
    rows = [
        PartitionSample("orders", 0, 1234, 2, 10, 50, True, 48, 45, 1),
        PartitionSample("orders", 1, 0, 1, 0, 0, False, 0, 0, 0),
        PartitionSample("a.b_c-d", 7, 5, 1, 0, 3, True, 3, 3, 0),
    ]
    families = {
        f.name: {(s.labels["topic"], s.labels["partition"]): s.value for s in f.samples}
        for f in text_string_to_metric_families(render_partition_families(rows).decode())
    }
    assert families["samsa_log_size_bytes"] == {
        ("orders", "0"): 1234,
        ("orders", "1"): 0,
        ("a.b_c-d", "7"): 5,
    }
    assert families["samsa_log_segments"][("orders", "0")] == 2
    assert families["samsa_log_start_offset"][("orders", "0")] == 10
    assert families["samsa_log_end_offset"][("a.b_c-d", "7")] == 3
    # Transactions' families cover the partitions led here only.
    assert families["samsa_log_last_stable_offset"] == {("orders", "0"): 45, ("a.b_c-d", "7"): 3}
    assert families["samsa_log_stable_lag"] == {("orders", "0"): 3, ("a.b_c-d", "7"): 0}
    assert families["samsa_log_open_transactions"] == {("orders", "0"): 1, ("a.b_c-d", "7"): 0}


def test_no_partitions_still_declares_every_family() -> None:
    text = render_partition_families([]).decode()
    names = {f.name for f in text_string_to_metric_families(text)}
    assert "samsa_log_end_offset" in names and "samsa_log_open_transactions" in names


def test_pieces_hold_at_most_a_step_of_partitions_and_join_into_the_whole_text() -> None:
    """The scrape writes a piece per loop callback (a broker of 10,000 partitions
    held its loop ~100 ms rendering them in one go)."""
    rows = [PartitionSample("t", p, p, 1, 0, p, p % 2 == 0, p, p, 0) for p in range(7)]
    pieces = list(partition_family_pieces(rows, step=3))
    assert "".join(pieces).encode() == render_partition_families(rows)
    samples = [piece for piece in pieces if not piece.startswith("# HELP")]
    assert samples and all(piece.count("\n") <= 3 for piece in samples)
