#!/usr/bin/env bash
# Set up everything Samsa's tests need on a fresh Debian machine with Python 3.11+:
# a virtualenv in .venv with Samsa and its test dependencies, and, with
# --with-system-packages, the system packages the tests use (Debian's kcat,
# chromium, nftables and iptables). Safe to run again. Running a broker needs
# none of this: scripts/run-broker.sh installs Samsa alone.
set -euo pipefail
cd "$(dirname "$0")/.."

# Samsa with the [test] extra (skipped when pyproject.toml has not changed).
./scripts/venv.sh test

# Debian's kcat (a real client the tests talk to) and chromium (the console's
# browser tests drive it with Playwright; Playwright's own browser download
# cannot work on machines without internet access).
if [ "${1:-}" = "--with-system-packages" ]; then
    missing=""
    command -v kcat >/dev/null 2>&1 || missing="$missing kcat"
    command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
    # nftables cuts links between the network namespaces of tests/netfaults.
    command -v nft >/dev/null 2>&1 || missing="$missing nftables"
    # iptables' NFQUEUE hands packets to tests/netfaults/packet_delay.py, which
    # delays, drops and duplicates them (this kernel has no netem qdisc).
    command -v iptables >/dev/null 2>&1 || missing="$missing iptables"
    if [ -n "$missing" ]; then
        SUDO=""
        if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
        $SUDO apt-get update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
    fi
fi
