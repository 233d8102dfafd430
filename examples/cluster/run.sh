#!/usr/bin/env bash
# Run a three-node Samsa cluster on this machine: clients use 127.0.0.1:9092,
# 127.0.0.1:9094 and 127.0.0.1:9096; data goes to ./cluster-data.  Ctrl-C stops
# all three (a controlled shutdown each).  A node that exits on its own (a port
# already in use, a bad setting) is named, and the other two are stopped.
# SAMSA_PYTHON=/path/to/python runs an installed Samsa instead of setting up .venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${SAMSA_PYTHON:-}
if [ -z "$python" ]; then
    ./scripts/setup.sh
    python=.venv/bin/python
fi
mkdir -p cluster-data
if [ ! -f cluster-data/cluster.id ]; then
    "$python" -c "from samsa.server.meta_properties import random_cluster_id as r; print(r())" \
        > cluster-data/cluster.id
fi
cluster_id=$(cat cluster-data/cluster.id)
pids=()
for node in 1 2 3; do
    "$python" -m samsa.cli broker --config "examples/cluster/node$node.properties" \
        --set "cluster.id=$cluster_id" &
    pids+=($!)
done
stop_all() {
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait || true
}
trap 'stop_all; exit 130' INT TERM

# Until Ctrl-C, a node only exits when it failed: say which, stop the others.
status=0
wait -n || status=$?
for i in "${!pids[@]}"; do
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
        node=$((i + 1))
        echo "run.sh: node $node (examples/cluster/node$node.properties) exited with" \
            "status $status; stopping the other nodes" >&2
        break
    fi
done
stop_all
exit $((status == 0 ? 1 : status))
