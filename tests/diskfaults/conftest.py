"""Fixtures of the disk fault tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.storage.files import io_faults


@pytest.fixture
def rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The io_faults rules file every node started by the test reads (empty: no fault)."""
    path = tmp_path / "io-faults"
    path.write_text("")
    monkeypatch.setenv(io_faults.ENV_VAR, str(path))
    return path
