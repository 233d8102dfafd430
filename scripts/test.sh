#!/usr/bin/env bash
# Set up everything (venv, test dependencies, Debian's kcat and chromium, Apache
# Kafka and Spark's Kafka connector through Maven) and run the checks:
# ruff (lint + format), mypy, then the whole pytest suite against real broker
# processes and real Kafka clients.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --with-system-packages
# Apache Kafka and Spark's Kafka connector, the test partners run beside Samsa.
./scripts/kafka-reference.sh

.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
