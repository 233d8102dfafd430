#!/usr/bin/env bash
# The clickstream example end to end, with one command on a fresh machine:
# set up .venv (Samsa with its [spark] extra), start a Samsa broker in a temporary data dir,
# send 10,000 click events, run the Structured Streaming job over them
# (availableNow), and print the per-minute page counts it wrote.
set -euo pipefail
cd "$(dirname "$0")/../.."
./scripts/venv.sh spark
PY="$PWD/.venv/bin/python"
export PYSPARK_PYTHON="$PY"

work=$(mktemp -d)
trap 'kill "$broker_pid" 2>/dev/null || true; wait "$broker_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
.venv/bin/samsa broker --listen 127.0.0.1:0 --data-dir "$work/data" > "$work/broker.out" 2> "$work/broker.log" &
broker_pid=$!
for _ in $(seq 1 200); do
    grep -q "samsa broker listening on" "$work/broker.out" && break
    sleep 0.1
done
bootstrap=$(sed -n 's/^samsa broker listening on //p' "$work/broker.out")
[ -n "$bootstrap" ] || { echo "broker did not start:"; cat "$work/broker.log"; exit 1; }
echo "broker on $bootstrap"

cd examples/clickstream
"$PY" generator.py --bootstrap "$bootstrap" --events 10000
"$PY" pipeline.py --bootstrap "$bootstrap" --output "$work/out" --available-now --master "local[2]"
"$PY" reader.py --bootstrap "$bootstrap" --output "$work/out"
