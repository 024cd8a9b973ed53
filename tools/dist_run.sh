#!/usr/bin/env bash
# Shared torchrun launcher of dist_train.sh and dist_test.sh: one process per GPU (or per CPU
# process on hosts without CUDA, where mlkd falls back to gloo and CPU DDP by itself).
#   bash tools/dist_run.sh SCRIPT NPROC [script args]
# Multi-node: NNODES, NODE_RANK, MASTER_ADDR and PORT from the environment.
set -euo pipefail
SCRIPT=$1
NPROC=$2
shift 2
if ! [[ "$NPROC" =~ ^[1-9][0-9]*$ ]]; then
    echo "error: GPUS must be a positive integer (processes per node), got '$NPROC'" >&2
    exit 2
fi
# The multi-node variables, checked here: torchrun's own error for NNODES=two is a traceback.
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
if ! [[ "$NNODES" =~ ^[1-9][0-9]*$ ]]; then
    echo "error: NNODES must be a positive integer (number of nodes), got '$NNODES'" >&2
    exit 2
fi
if ! [[ "$NODE_RANK" =~ ^[0-9]+$ ]] || [ "$NODE_RANK" -ge "$NNODES" ]; then
    echo "error: NODE_RANK must be an integer in 0..$((NNODES - 1)) (NNODES=$NNODES)," \
        "got '$NODE_RANK'" >&2
    exit 2
fi
if ! [[ "$PORT" =~ ^[1-9][0-9]*$ ]] || [ "$PORT" -gt 65535 ]; then
    echo "error: PORT must be an integer in 1..65535, got '$PORT'" >&2
    exit 2
fi
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

PYTHONPATH="$DIR/..${PYTHONPATH:+:$PYTHONPATH}" \
python -m torch.distributed.run \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --master_addr="${MASTER_ADDR:-127.0.0.1}" \
    --nproc_per_node="$NPROC" \
    --master_port="$PORT" \
    "$SCRIPT" "$@" --launcher pytorch
