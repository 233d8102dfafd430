#!/usr/bin/env bash
# Run a three-node Samsa cluster on this machine: clients use 127.0.0.1:9092,
# 127.0.0.1:9094 and 127.0.0.1:9096; data goes to ./cluster-data.  Ctrl-C stops
# all three (a controlled shutdown each).
set -euo pipefail
cd "$(dirname "$0")/../.."
./scripts/setup.sh
mkdir -p cluster-data
if [ ! -f cluster-data/cluster.id ]; then
    .venv/bin/python -c "from samsa.server.meta_properties import random_cluster_id as r; print(r())" \
        > cluster-data/cluster.id
fi
cluster_id=$(cat cluster-data/cluster.id)
pids=()
for node in 1 2 3; do
    .venv/bin/samsa broker --config "examples/cluster/node$node.properties" \
        --set "cluster.id=$cluster_id" &
    pids+=($!)
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' INT TERM
wait
