"""pyarrow stays optional: the client never imports it, the Arrow API names the extra."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_importing_the_client_does_not_import_pyarrow() -> None:
    done = _run(
        "import sys, samsa.client, samsa.client.consumer\n"
        "from samsa.client import Consumer\n"
        "assert 'pyarrow' not in sys.modules, 'pyarrow was imported'\n"
    )
    assert done.returncode == 0, done.stderr


def test_arrow_api_without_pyarrow_says_how_to_install_it() -> None:
    done = _run(
        "import sys\n"
        "sys.modules['pyarrow'] = None  # as if not installed\n"
        "try:\n"
        "    import samsa.client.arrow\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
        "else:\n"
        "    raise SystemExit('imported without pyarrow')\n"
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'samsa[arrow]'" in done.stdout
