#!/usr/bin/env bash
# Set up Samsa (only what the broker needs, in .venv; nothing when it is already
# there) and run the embedded single-node broker on 127.0.0.1:9092 with data in
# ./samsa-data. Extra arguments go to `samsa broker` (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/venv.sh
exec .venv/bin/samsa broker "$@"
