"""Columnar reads: fetched bytes straight into ``pyarrow`` record batches (the ``arrow`` extra)."""
