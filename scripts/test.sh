#!/usr/bin/env bash
# Set up everything (venv, test dependencies, Debian's kcat and chromium, Apache
# Kafka, Spark's Kafka connector and S3Proxy through Maven) and run the checks:
# ruff (lint + format), mypy, then the whole pytest suite against real broker
# processes and real Kafka clients.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --with-system-packages
# Apache Kafka and Spark's Kafka connector, the test partners run beside Samsa.
./scripts/kafka-reference.sh
# The S3-compatible server (S3Proxy) the tiered-storage tests run against.
./scripts/object-store.sh >/dev/null

.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
# Two xdist workers, each module's tests on one of them (they share a broker);
# the tests that measure rates or wall times run afterwards, alone.
.venv/bin/python -m pytest -q -n 2 --dist loadfile -m "not serial" "$@"
# (exit status 5: nothing selected, when "$@" names no serial test)
.venv/bin/python -m pytest -q -m serial "$@" || [ $? -eq 5 ]
