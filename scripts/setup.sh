#!/usr/bin/env bash
# Set up everything Samsa needs on a fresh Debian machine with Python 3.11+:
# a virtualenv in .venv with Samsa and its test dependencies, and the system
# packages the tests use (Debian's kcat). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"

if [ "${1:-}" = "--with-system-packages" ] && ! command -v kcat >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq kcat >/dev/null
fi
