#!/usr/bin/env bash
# Run a three-node Samsa cluster on this machine; data goes to ./cluster-data.
#
#   examples/cluster/run.sh [--base-port PORT]
#
# Node N (1, 2, 3) takes two ports counted from PORT (default 9092, or $BASE_PORT):
# PORT+2(N-1) for clients and the next one for the quorum, so by default clients
# use 127.0.0.1:9092, 9094 and 9096 and the controllers 9093, 9095 and 9097.
# Each node's settings are written from examples/cluster/node.properties to
# cluster-data/nodeN.properties.  Ctrl-C stops all three (a controlled shutdown
# each).  A node that exits on its own (a port already in use, a bad setting) is
# named, and the other two are stopped.
# SAMSA_PYTHON=/path/to/python runs an installed Samsa instead of setting up .venv.
set -euo pipefail
cd "$(dirname "$0")/../.."

base_port=${BASE_PORT:-9092}
while [ $# -gt 0 ]; do
    case "$1" in
        --base-port) base_port=${2:-}; shift $(($# > 1 ? 2 : 1)) ;;
        --base-port=*) base_port=${1#*=}; shift ;;
        -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if ! [[ "$base_port" =~ ^[0-9]+$ ]] || [ "$base_port" -lt 1 ] || [ "$base_port" -gt 65530 ]; then
    echo "run.sh: --base-port wants a port from 1 to 65530 (six ports from it), got '$base_port'" >&2
    exit 2
fi

python=${SAMSA_PYTHON:-}
if [ -z "$python" ]; then
    ./scripts/venv.sh
    python=.venv/bin/python
fi
mkdir -p cluster-data
if [ ! -f cluster-data/cluster.id ]; then
    "$python" -c "from samsa.server.metadata.meta_properties import random_cluster_id as r; print(r())" \
        > cluster-data/cluster.id
fi
cluster_id=$(cat cluster-data/cluster.id)

client_port() { echo $((base_port + 2 * ($1 - 1))); }
controller_port() { echo $((base_port + 2 * ($1 - 1) + 1)); }
voters="1@127.0.0.1:$(controller_port 1),2@127.0.0.1:$(controller_port 2),3@127.0.0.1:$(controller_port 3)"
for node in 1 2 3; do
    sed -e "s/@NODE_ID@/$node/g" -e "s/@CLIENT_PORT@/$(client_port "$node")/g" \
        -e "s/@CONTROLLER_PORT@/$(controller_port "$node")/g" -e "s/@VOTERS@/$voters/g" \
        examples/cluster/node.properties > "cluster-data/node$node.properties"
done

pids=()
for node in 1 2 3; do
    "$python" -m samsa.cli broker --config "cluster-data/node$node.properties" \
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
        echo "run.sh: node $node (cluster-data/node$node.properties) exited with" \
            "status $status; stopping the other nodes" >&2
        break
    fi
done
stop_all
exit $((status == 0 ? 1 : status))
