#!/usr/bin/env bash
# Usage: scripts/venv.sh [EXTRA]
# Make .venv (with $PYTHON, default python3) and install Samsa into it, editable,
# with the optional EXTRA of pyproject.toml ("test", "spark", ...) or alone.
# A stamp in .venv records what was installed (a hash of pyproject.toml, the
# extra and the Python version): when nothing changed the call returns at once,
# so scripts that call it on every start cost nothing after the first.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRA=${1:-}
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "setting up .venv with $("$PYTHON" --version 2>&1) (the first time takes a minute)" >&2
    "$PYTHON" -m venv .venv
fi

target=.
stamp=.venv/.samsa-installed
if [ -n "$EXTRA" ]; then
    target=".[$EXTRA]"
    stamp=".venv/.samsa-installed-$EXTRA"
fi
fingerprint() {  # what an install with extra $1 was made from
    { cat pyproject.toml; echo "extra=$1"; .venv/bin/python --version 2>&1; } | sha256sum | cut -d' ' -f1
}
wanted=$(fingerprint "$EXTRA")
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
    exit 0
fi
echo "installing Samsa${EXTRA:+ with [$EXTRA]} into .venv" >&2
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e "$target"
echo "$wanted" > "$stamp"
# An extra's install holds Samsa itself too: run-broker.sh need not install again.
[ -z "$EXTRA" ] || fingerprint "" > .venv/.samsa-installed
